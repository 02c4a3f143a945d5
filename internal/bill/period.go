package bill

import (
	"strings"
	"time"

	// The IANA time zone database, embedded: a report's day boundaries must
	// not depend on whether the machine has tzdata installed, or which
	// version (docs/finance.md, "Time zones").
	_ "time/tzdata"

	"github.com/paygate/gateway/postings"
)

// A report's period is a range of calendar days, both included, in one time
// zone (UTC unless the request names an IANA zone): [start 00:00, end+1
// 00:00) in that zone. A day of a DST change is 23 or 25 hours long; the
// boundaries are the zone's midnights, so the days tile with no gap and no
// overlap. One function for the API, the CLI and the console, so that the
// three agree on every boundary.

// ReportDaysMax bounds a report's period, both days included.
const ReportDaysMax = 366

// timeZoneMax bounds a zone's name: the longest IANA name is 32 bytes
// (America/Argentina/ComodRivadavia).
const timeZoneMax = 64

// ParseTimeZone reads an IANA time zone name; "" is UTC. A refusal is
// EINVALID naming field: control characters or any byte outside the
// characters of IANA names, a "." path step, "Local" (the machine's own
// zone, which the answer must not depend on), or a name the database does
// not know.
func ParseTimeZone(field, s string) (*time.Location, error) {
	if s == "" {
		return time.UTC, nil
	}
	bad := postings.FieldErrorf(field, "must be an IANA time zone name such as Europe/Paris, or UTC")
	if len(s) > timeZoneMax || s == "Local" || strings.Contains(s, "..") || s[0] == '/' {
		return nil, bad
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '/' || c == '_' || c == '-' || c == '+'
		if !ok {
			return nil, bad
		}
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, bad
	}
	return loc, nil
}

// Period is a report's range of days in a zone.
type Period struct {
	Start, End time.Time // the first and last day (UTC dates, as parsed)
	Zone       *time.Location
}

// NewPeriod checks a range of days: end not before start, at most
// ReportDaysMax days. Refusals name endDate (the API's name; the CLI
// reports it as --to).
func NewPeriod(start, end time.Time, zone *time.Location) (Period, error) {
	if end.Before(start) {
		return Period{}, postings.FieldErrorf("endDate", "must not be before startDate")
	}
	if end.Sub(start) >= ReportDaysMax*24*time.Hour {
		return Period{}, postings.FieldErrorf("endDate", "must be within %d days of startDate, both included", ReportDaysMax)
	}
	if zone == nil {
		zone = time.UTC
	}
	return Period{Start: start, End: end, Zone: zone}, nil
}

// From is the period's first instant: midnight of its first day in its zone.
func (p Period) From() time.Time { return midnight(p.Start, p.Zone) }

// To is the instant after the period: midnight of the day after its last.
func (p Period) To() time.Time { return midnight(p.End.AddDate(0, 0, 1), p.Zone) }

// midnight is the start of day d (a UTC date) in zone. Where a zone skips
// midnight (a DST change at 00:00, as America/Santiago's), time.Date may
// answer with either offset, and one of them is the previous evening; the
// day's first instant is then an hour on (the gap's length), so that a day
// boundary is always inside its own day.
func midnight(d time.Time, zone *time.Location) time.Time {
	t := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, zone)
	if t.Day() != d.Day() {
		t = t.Add(time.Hour)
	}
	return t
}
