package main

import (
	"errors"
	"testing"
	"time"
)

// TestPauseWatch: the moving merchant's attempts are 2xx, or 503 with
// Retry-After (the pause, spanned from the first to the last); a 503
// without Retry-After, any other status and a lost connection are
// violations.
func TestPauseWatch(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, c := range []struct {
		name                 string
		attempts             []attempt
		ok, unavailable, bad int
		seen                 time.Duration
	}{
		{"served", []attempt{{start: at(0), end: at(0.1), status: 200}, {start: at(1), end: at(1.1), status: 201}}, 2, 0, 0, 0},
		{"the pause", []attempt{
			{start: at(0), end: at(0.1), status: 200},
			{start: at(1), end: at(1.1), status: 503, retryAfter: 2 * time.Second},
			{start: at(3), end: at(3.2), status: 503, retryAfter: 2 * time.Second},
			{start: at(5), end: at(5.1), status: 200},
		}, 2, 2, 0, 2200 * time.Millisecond},
		{"503 without Retry-After", []attempt{{start: at(0), end: at(0.1), status: 503}}, 0, 0, 1, 0},
		{"a 500", []attempt{{start: at(0), end: at(0.1), status: 500}}, 0, 0, 1, 0},
		{"a 404: the merchant unknown", []attempt{{start: at(0), end: at(0.1), status: 404}}, 0, 0, 1, 0},
		{"no answer", []attempt{{start: at(0), end: at(0.1), transport: errors.New("reset")}}, 0, 0, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &pauseWatch{}
			for _, a := range c.attempts {
				w.observe(a)
			}
			if w.ok != c.ok || w.unavailable != c.unavailable || w.bad != c.bad || w.seen() != c.seen {
				t.Errorf("ok %d, 503 %d, bad %d, seen %s; want %d, %d, %d, %s", w.ok, w.unavailable, w.bad, w.seen(),
					c.ok, c.unavailable, c.bad, c.seen)
			}
			if (w.bad > 0) != (w.firstBad != "") {
				t.Errorf("firstBad %q with %d bad", w.firstBad, w.bad)
			}
		})
	}
}

// TestCheckAuthorizations: an authorization of the moving merchant's card
// is approved (00) or declined 91 by the router (no authId); any other
// answer, a 91 with an authId (stored: not the router's) or an error is a
// violation.
func TestCheckAuthorizations(t *testing.T) {
	for _, c := range []struct {
		name       string
		p          holdPlan
		violations int
		declined   int
	}{
		{"approved", holdPlan{approved: true, authID: "auth_b2x", authAns: netAnswer{code: 200, approved: true, respCode: "00", authID: "auth_b2x"}}, 0, 0},
		{"the pause's 91", holdPlan{authAns: netAnswer{code: 200, respCode: "91"}}, 0, 1},
		{"insufficient funds", holdPlan{authAns: netAnswer{code: 200, respCode: "51"}}, 1, 0},
		{"a 91 stored", holdPlan{authID: "auth_a1x", authAns: netAnswer{code: 200, respCode: "91", authID: "auth_a1x"}}, 1, 0},
		{"unanswered", holdPlan{violation: []string{"authorization x: no answer"}}, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			ld := &moveLoad{holds: []*holdPlan{&p}}
			var v []string
			got := ld.checkAuthorizations(func(f string, args ...any) { v = append(v, f) })
			if len(v) != c.violations || got != c.declined {
				t.Errorf("violations %v, declined %d; want %d, %d", v, got, c.violations, c.declined)
			}
		})
	}
}
