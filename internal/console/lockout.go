package console

import (
	"context"
	"runtime"
	"time"

	"github.com/paygate/gateway/internal/console/auth"
)

// One check of a user's password (and TOTP code) for whatever asks for
// one: /login, a change of one's own password (/account), and the step-up
// before a lasting-power action on /users and /house/users
// (docs/console.md, "Signing in"). Every check goes the same way, so no
// page is a way around another's limits:
//
//  0. the user is looked up and the try is marked open (bursts.go) before
//     it waits for anything, so that tries of a burst queued behind the
//     hashes still see each other;
//  1. a place among the hashes running at once (hashSlots); none within
//     hashWait is a 503 with Retry-After, nothing counted;
//  2. the address's slot, taken atomically (store.takeAddressSlot); at the
//     limit, a 429 with no hash;
//  3. the user's slot, taken atomically (store.takeUserSlot): the try is
//     counted as failed before it is checked, and a locked user's try is
//     not checked at all;
//  4. exactly one argon2 hash whatever the state (unknown, locked,
//     disabled, wrong, right): the user's, or the dummy one, so that the
//     time of a refusal does not tell the state;
//  5. a success clears the count only if no other try of the user ran
//     beside it (bursts.go, store.succeed).

// hashWait is how long a check waits for a place among the hashes before
// it is answered 503: a few hashes' time, so that logins arriving together
// by chance wait instead of failing, and a burst does not queue.
const hashWait = time.Second

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

// checkCredentials checks pw (and code, for the roles with TOTP) of the
// user find returns, as the steps above say, and records the try in
// console_login_attempts with its reason prefixed by purpose ("" for
// /login, "account_", "stepup_").
func (s *Server) checkCredentials(ctx context.Context, addr, purpose string, find func(context.Context) (*userRow, error),
	pw, code string) (checkOutcome, error) {
	u, err := find(ctx)
	if err != nil {
		return checkOutcome{}, err
	}
	var try *auth.Try
	if u != nil {
		// Open before the wait for a hash: with few hash places a burst
		// queues there, and its tries must still overlap (TestConsoleHTTPFuzzLoginBursts
		// found a right password signing in from a queued burst).
		try = s.tries.Begin(u.ID)
		defer s.tries.End(u.ID, try)
	}
	if !s.takeHashSlot(ctx) {
		return checkOutcome{reason: "busy", status: 503}, nil
	}
	defer func() { <-s.hashSlots }()
	now := s.now()
	attempt, err := s.store.TakeAddressSlot(ctx, addr, now.Add(-s.cfg.LockoutFor), now, s.cfg.AddressFailures)
	if err != nil {
		return checkOutcome{}, err
	}
	if attempt == 0 {
		return checkOutcome{reason: "address_limited", status: 429},
			s.store.RecordAttempt(ctx, "", addr, false, purpose+"address_limited", now)
	}
	out, err := s.checkUser(ctx, u, try, pw, code, now)
	if err != nil {
		return checkOutcome{}, err
	}
	login := ""
	if out.user != nil {
		login = out.user.Login
	}
	return out, s.store.FinishAttempt(ctx, attempt, login, out.ok, purpose+out.reason)
}

// checkUser is steps 3 to 5, once the address's slot is taken.
func (s *Server) checkUser(ctx context.Context, u *userRow, try *auth.Try, pw, code string, now time.Time) (checkOutcome, error) {
	if u == nil {
		auth.CheckPassword(auth.DummyHash(), pw) // the same cost as a known login
		return checkOutcome{reason: "unknown_login"}, nil
	}
	slot, err := s.store.TakeUserSlot(ctx, u.ID, s.cfg.LockoutFailures, now, now.Add(s.cfg.LockoutFor))
	if err != nil {
		return checkOutcome{}, err
	}
	if slot == 0 {
		auth.CheckPassword(auth.DummyHash(), pw) // locked: not checked, at the same cost
		return checkOutcome{user: u, reason: "locked"}, nil
	}
	return s.checkSlot(ctx, u, slot, try, pw, code, now)
}

// checkSlot checks the password and code of a try that holds the user's
// slot number slot, and clears the count when they are right and the try
// ran alone.
func (s *Server) checkSlot(ctx context.Context, u *userRow, slot int, try *auth.Try, pw, code string, now time.Time) (checkOutcome, error) {
	if testBeforeHash != nil {
		testBeforeHash()
	}
	out := checkOutcome{user: u, locked: slot >= s.cfg.LockoutFailures}
	if !auth.CheckPassword(u.passwordHash, pw) {
		out.reason = "bad_password"
		return out, nil
	}
	if u.disabled {
		out.reason = "disabled"
		return out, nil
	}
	step, err := s.totpStepOf(u, code, now)
	if err != nil {
		return checkOutcome{}, err
	}
	if step < 0 {
		out.reason = "bad_totp"
		return out, nil
	}
	if s.tries.Crowded(try) {
		// Right, but sent beside another try of the user: refused, its
		// slot still counted (bursts.go).
		out.reason = "concurrent"
		return out, nil
	}
	if out.reason, err = s.store.Succeed(ctx, u.ID, slot, step); err != nil || out.reason != "" {
		return out, err
	}
	return checkOutcome{user: u, ok: true, reason: "ok"}, nil
}

// takeHashSlot waits up to hashWait for a place among the hashes.
func (s *Server) takeHashSlot(ctx context.Context) bool {
	select {
	case s.hashSlots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(hashWait)
	defer t.Stop()
	select {
	case s.hashSlots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// testBeforeHash, when set (export_test.go), runs after a try has taken
// the user's slot and before its hash: a test holds the tries there to
// send others beside them.
var testBeforeHash func()
