package console_test

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestConsoleHTTPFuzzLoginBursts is the console fuzz run's class of
// concurrent logins (issue 27, point 2): seeded bursts of /login posts for
// one user at a time, of random size, from one address or many, mixing
// wrong passwords, the right one and malformed bytes, all sent at once.
// Whatever the mix, never a 5xx but a busy 503 with Retry-After; never more
// of the user's passwords checked than the lockout allows; and never a
// sign-in from a burst, since a burst is a script (login.go).
func TestConsoleHTTPFuzzLoginBursts(t *testing.T) {
	seed := *consoleFuzzSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: go test ./internal/console -run 'TestConsoleHTTPFuzzLoginBursts$' -args -consolefuzz.seed=%d", seed)
		}
	})
	f := newFixture(t)
	rng := rand.New(rand.NewPCG(seed, 2702))
	// Merchant users only: house users' TOTP codes are good once, which
	// a burst of the same code would test instead of the lockout.
	for _, login := range []string{"ann.admin", "fred.finance", "rita.readonly", "bob.admin"} {
		n := 5 + rng.IntN(36)
		forms := make([]url.Values, n)
		rights := 0
		for i := range forms {
			pw := "wrong password " + string(rune('a'+i%26))
			switch r := rng.IntN(10); {
			case r < 2:
				pw, rights = password, rights+1
			case r < 3:
				pw = "bad\xffbytes"
			case r < 4:
				pw = "nul\x00inside"
			}
			forms[i] = f.loginForm(t, login, pw, "")
		}
		oneAddress := rng.IntN(2) == 0
		answers := f.burst(t, forms, oneAddress)
		statuses := map[int]int{}
		for i, a := range answers {
			statuses[a.status]++
			switch {
			case a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") == "":
				t.Errorf("seed %d, %s try %d: 503 without Retry-After", seed, login, i)
			case a.status >= 500 && a.status != http.StatusServiceUnavailable:
				t.Errorf("seed %d, %s try %d: %d", seed, login, i, a.status)
			case a.status == http.StatusSeeOther:
				t.Errorf("seed %d, %s try %d: a burst of %d signed in", seed, login, i, n)
			}
		}
		var checkedTries int
		if err := f.g.DB().DB.QueryRow(`select count(*) from console_login_attempts where login = $1
			and reason in ('bad_password', 'ok', 'concurrent', 'bad_totp', 'disabled', 'totp_replayed')`, login).Scan(&checkedTries); err != nil {
			t.Fatal(err)
		}
		if checkedTries > f.lockFailures {
			t.Errorf("seed %d, %s: %d passwords checked in a burst of %d (one address %v, %d right), the limit is %d",
				seed, login, checkedTries, n, oneAddress, rights, f.lockFailures)
		}
		t.Logf("%s: burst of %d (one address %v, %d right): %v, %d checked", login, n, oneAddress, rights, statuses, checkedTries)
	}
}
