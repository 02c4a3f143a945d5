package postings

import "time"

// Days given as input — the bill's startDate and endDate, a statement's
// --from and --to, a settlement file's dates — are UTC calendar days in a
// bounded range, checked before they reach SQL: Go parses years 0000 to
// 9999, and PostgreSQL has no year 0 (0000-01-01 is an SQL error, so a
// 500), while a range's exclusive end, the day after the last, must stay
// representable too (docs/api.md, "Bill"; docs/errors.md).

// DayLayout is the written form of a day.
const DayLayout = "2006-01-02"

// The accepted days, both included. Nothing in the journal predates the
// Unix epoch; 9999-12-31 is the last day with a four-digit year, and the
// day after it (10000-01-01) is still inside PostgreSQL's timestamptz
// range (to 294276 AD).
var (
	DayMin = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	DayMax = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// ParseDay reads a day written YYYY-MM-DD (exactly: no sign, no time, no
// other widths; the day must exist in its month, so 2025-02-29 and
// 2024-02-30 are refused) between DayMin and DayMax. A refusal is EINVALID
// naming field.
func ParseDay(field, s string) (time.Time, error) {
	d, err := time.Parse(DayLayout, s)
	if err != nil || len(s) != len(DayLayout) || d.Format(DayLayout) != s {
		return time.Time{}, FieldErrorf(field, "must be a date YYYY-MM-DD")
	}
	if d.Before(DayMin) || d.After(DayMax) {
		return time.Time{}, FieldErrorf(field, "must be a day from %s to %s", DayMin.Format(DayLayout), DayMax.Format(DayLayout))
	}
	return d, nil
}
