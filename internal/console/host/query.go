package host

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// A query's parameters as every page reads them, with the API's bounds and
// refusals naming the field.

// DaysMax bounds a range of days, both included: the API's bill range.
const DaysMax = 366

// ParseDays reads startDate and endDate (both or neither; neither: the
// last def days), refusing what the API refuses, naming the field.
func ParseDays(r *http.Request, now time.Time, def int) (start, end time.Time, err error) {
	q := r.URL.Query()
	s, e := q.Get("startDate"), q.Get("endDate")
	if len(q["startDate"]) > 1 || len(q["endDate"]) > 1 {
		return start, end, postings.FieldErrorf("startDate", "appears more than once")
	}
	if s == "" && e == "" {
		end = now.UTC().Truncate(24 * time.Hour)
		return end.AddDate(0, 0, -(def - 1)), end, nil
	}
	if start, err = postings.ParseDay("startDate", s); err != nil {
		return
	}
	if end, err = postings.ParseDay("endDate", e); err != nil {
		return
	}
	if end.Before(start) {
		return start, end, postings.FieldErrorf("endDate", "must not be before startDate")
	}
	if end.Sub(start) >= DaysMax*24*time.Hour {
		return start, end, postings.FieldErrorf("endDate", "must be within %d days of startDate, both included", DaysMax)
	}
	return start, end, nil
}

// QueryInt reads an optional decimal integer in [lo, hi], written the one
// way the console writes it: digits only, no sign, no leading zero. Up to
// 19 digits, so that ids of a cell (n × 10¹², docs/scaling.md) page as
// well as today's.
func QueryInt(r *http.Request, name string, lo, hi, def int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || len(s) > 19 || len(s) > 1 && s[0] == '0' || strings.ContainsAny(s, "+-") || n < lo || n > hi {
		return 0, postings.FieldErrorf(name, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}
