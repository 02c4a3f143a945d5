package console

import (
	"context"
	"runtime"
	"time"

	"github.com/paygate/gateway/internal/console/auth"
)

// One check of a user's password (and TOTP code) for whatever asks for
// one — /login, /account, the step-up — is auth.Checker's (its steps are
// written there): the same limits for every page, so no page is a way
// around another's. The console gives it the store's counters and its
// users as candidates.

// hashSlotsDefault bounds the argon2 hashes of checks running at once: one
// per CPU, so that a burst of logins takes the CPUs for hashing at most,
// never more memory than that many hashes (19 MiB each).
func hashSlotsDefault() int { return runtime.NumCPU() }

type checkOutcome struct {
	user   *userRow // the user checked; nil when unknown
	ok     bool
	reason string // console_login_attempts.reason without the purpose's prefix
	status int    // 0, or the refusal's own status: 429 (address) or 503 (busy)
	locked bool   // this failure took the user's last try
}

// newChecker is the server's checker, on its store and hash places.
func (s *Server) newChecker() *auth.Checker {
	return &auth.Checker{Counters: s.store, LockoutFailures: s.cfg.LockoutFailures, LockoutFor: s.cfg.LockoutFor,
		AddressFailures: s.cfg.AddressFailures, Now: s.now, Slots: s.hashSlots, BeforeHash: func() {
			if testBeforeHash != nil {
				testBeforeHash()
			}
		}}
}

// checkCredentials checks pw (and code) of the user find returns
// (auth.Checker.Check) and records the try in console_login_attempts with
// its reason prefixed by purpose ("" for /login, "account_", "stepup_").
func (s *Server) checkCredentials(ctx context.Context, addr, purpose string, find func(context.Context) (*userRow, error),
	pw, code string) (checkOutcome, error) {
	var u *userRow
	out, err := s.checker.Check(ctx, addr, purpose, func(ctx context.Context) (*auth.Candidate, error) {
		var err error
		if u, err = find(ctx); u == nil || err != nil {
			return nil, err
		}
		return &auth.Candidate{ID: u.ID, Login: u.Login, PasswordHash: u.passwordHash, Disabled: u.disabled,
			TOTPStep: func(code string, now time.Time) (int64, error) { return s.totpStepOf(u, code, now) }}, nil
	}, pw, code)
	co := checkOutcome{ok: out.OK, reason: out.Reason, status: out.Status, locked: out.Locked}
	if out.User != nil {
		co.user = u
	}
	return co, err
}

// testBeforeHash, when set (export_test.go), runs after a try has taken
// the user's slot and before its hash: a test holds the tries there to
// make a burst.
var testBeforeHash func()
