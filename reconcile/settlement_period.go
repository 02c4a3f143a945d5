package reconcile

import (
	"fmt"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// A settlement file states the settlement days it covers, its period, so
// that the ledger's side of the match is every clearing of those days, not
// the days the rows happen to carry: a file reduced to its header, or
// missing a day's rows, then cannot pass. The period is the file's first
// line,
//
//	# period: 2026-11-20
//	# period: 2026-11-20/2026-11-22
//
// (UTC days, both included; the second form is ISO 8601's interval), or,
// for a file without that line, the command's --day or --from/--to (the
// console's form fields). When both are given they must agree.

// Period is a range of UTC settlement days, both included.
type Period struct {
	From, To time.Time
}

// settlementPeriodDaysMax bounds a period: a year, as the console's
// statement. A settlement file covers a day, a weekend, at most a month.
const settlementPeriodDaysMax = 366

// IsZero reports whether the period is unset.
func (p Period) IsZero() bool { return p.From.IsZero() }

// String writes the period as the file's line does: one day, or FROM/TO.
func (p Period) String() string {
	if p.IsZero() {
		return ""
	}
	if p.From.Equal(p.To) {
		return p.From.Format(postings.DayLayout)
	}
	return p.From.Format(postings.DayLayout) + "/" + p.To.Format(postings.DayLayout)
}

// contains reports whether day (YYYY-MM-DD) is in the period.
func (p Period) contains(day time.Time) bool { return !day.Before(p.From) && !day.After(p.To) }

// end is the instant after the period's last day.
func (p Period) end() time.Time { return p.To.AddDate(0, 0, 1) }

// NewPeriod checks a period given as two days (the CLI's flags, the
// console's fields); fromField and toField name them in an EINVALID.
func NewPeriod(fromField, from, toField, to string) (Period, error) {
	f, err := postings.ParseDay(fromField, from)
	if err != nil {
		return Period{}, err
	}
	t, err := postings.ParseDay(toField, to)
	if err != nil {
		return Period{}, err
	}
	p := Period{From: f, To: t}
	if problem := p.problem(); problem != "" {
		return Period{}, postings.WithField(postings.Errorf(postings.EINVALID, "%s", problem), toField)
	}
	return p, nil
}

func (p Period) problem() string {
	switch {
	case p.To.Before(p.From):
		return "the period ends before it starts"
	case p.To.Sub(p.From) >= settlementPeriodDaysMax*24*time.Hour:
		return fmt.Sprintf("a period covers at most %d days", settlementPeriodDaysMax)
	}
	return ""
}

// periodLinePrefix starts the file's period line (after "#" and spaces,
// in any case).
const periodLinePrefix = "period:"

// periodSyntax is the line's form, for the errors that refuse it.
const periodSyntax = "# period: YYYY-MM-DD[/YYYY-MM-DD]"

// parsePeriodLine reads the file's first line when it starts with "#". A
// line that is not a valid period is unusable input: the file would
// otherwise be reconciled against days nobody meant. Nothing of the line
// is echoed.
func parsePeriodLine(line string) (Period, string) {
	text := strings.TrimSpace(strings.TrimPrefix(line, "#"))
	if len(text) < len(periodLinePrefix) || !strings.EqualFold(text[:len(periodLinePrefix)], periodLinePrefix) {
		return Period{}, "a first line starting with # must be " + periodSyntax
	}
	from, to, ranged := strings.Cut(strings.TrimSpace(text[len(periodLinePrefix):]), "/")
	if !ranged {
		to = from
	}
	p, err := NewPeriod("period", from, "period", to)
	if err != nil {
		return Period{}, fmt.Sprintf("the period: %s (%s)", postings.AsError(err).Message, periodSyntax)
	}
	return p, ""
}

// resolvePeriod is the period reconciled: the file's, the caller's, or both
// when they agree.
func resolvePeriod(stated, given Period, statedLine int64) (Period, error) {
	switch {
	case stated.IsZero() && given.IsZero():
		return Period{}, &FileError{Msg: "the file states no settlement period: add the first line " + periodSyntax +
			", or give the period (--day, or --from and --to)"}
	case stated.IsZero():
		return given, nil
	case given.IsZero() || (stated.From.Equal(given.From) && stated.To.Equal(given.To)):
		return stated, nil
	}
	return Period{}, &FileError{Line: statedLine, Msg: fmt.Sprintf("the file's period is %s, the period given is %s", stated, given)}
}
