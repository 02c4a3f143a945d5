package auth

import (
	"context"
	"time"
)

// One check of a user's password (and TOTP code) for whatever asks for
// one: the console's /login, a change of one's own password (/account),
// and the step-up before a lasting-power action on /users and /house/users
// (docs/console.md, "Signing in"). Every check goes the same way, so no
// page is a way around another's limits:
//
//  0. the user is looked up and the try is marked open (Tries) before it
//     waits for anything, so that tries of a burst queued behind the
//     hashes still see each other;
//  1. a place among the hashes running at once (Slots); none within
//     hashWait is a 503 with Retry-After, nothing counted;
//  2. the address's slot, taken atomically (Counters.TakeAddressSlot); at
//     the limit, a 429 with no hash;
//  3. the user's slot, taken atomically (Counters.TakeUserSlot): the try is
//     counted as failed before it is checked, and a locked user's try is
//     not checked at all;
//  4. exactly one argon2 hash whatever the state (unknown, locked,
//     disabled, wrong, right): the user's, or the dummy one, so that the
//     time of a refusal does not tell the state;
//  5. a success clears the count only if no other try of the user ran
//     beside it (Tries, Counters.Succeed).

// hashWait is how long a check waits for a place among the hashes before
// it is answered 503: a few hashes' time, so that logins arriving together
// by chance wait instead of failing, and a burst does not queue.
const hashWait = time.Second

// Counters are the statements that count the tries (the console's store).
type Counters interface {
	TakeAddressSlot(ctx context.Context, addr string, since, now time.Time, limit int) (int64, error)
	RecordAttempt(ctx context.Context, login, addr string, ok bool, reason string, at time.Time) error
	FinishAttempt(ctx context.Context, id int64, login string, ok bool, reason string) error
	TakeUserSlot(ctx context.Context, user int64, lockAfter int, now, until time.Time) (int, error)
	Succeed(ctx context.Context, user int64, slot int, step int64) (string, error)
}

// Candidate is the user a check found, as the check needs it.
type Candidate struct {
	ID           int64
	Login        string
	PasswordHash string
	Disabled     bool // the user, or its merchant
	// TOTPStep is the step at which code is valid: 0 for a user who signs
	// in without one, -1 for a wrong code.
	TOTPStep func(code string, now time.Time) (int64, error)
}

// Checker checks credentials with the lockout's limits.
type Checker struct {
	Counters        Counters
	LockoutFailures int           // consecutive failures that lock a user
	LockoutFor      time.Duration // how long a lockout lasts, and the address's window
	AddressFailures int           // failures from one address within LockoutFor that refuse it
	Now             func() time.Time
	// Slots are the places of the hashes running at once.
	Slots chan struct{}
	// BeforeHash, when set, runs after a try took its user's slot and
	// before its hash (a test holds a burst there).
	BeforeHash func()
	tries      Tries
}

// Outcome is what a check found.
type Outcome struct {
	User   *Candidate // the user checked; nil when unknown
	OK     bool
	Reason string // console_login_attempts.reason without the purpose's prefix
	Status int    // 0, or the refusal's own status: 429 (address) or 503 (busy)
	Locked bool   // this failure took the user's last try
}

// Check checks pw (and code, for the roles with TOTP) of the user find
// returns, as the steps above say, and records the try with its reason
// prefixed by purpose ("" for /login, "account_", "stepup_").
func (c *Checker) Check(ctx context.Context, addr, purpose string, find func(context.Context) (*Candidate, error),
	pw, code string) (Outcome, error) {
	u, err := find(ctx)
	if err != nil {
		return Outcome{}, err
	}
	var try *Try
	if u != nil {
		try = c.tries.Begin(u.ID)
		defer c.tries.End(u.ID, try)
	}
	if !c.takeHashSlot(ctx) {
		return Outcome{Reason: "busy", Status: 503}, nil
	}
	defer func() { <-c.Slots }()
	now := c.Now()
	attempt, err := c.Counters.TakeAddressSlot(ctx, addr, now.Add(-c.LockoutFor), now, c.AddressFailures)
	if err != nil {
		return Outcome{}, err
	}
	if attempt == 0 {
		return Outcome{Reason: "address_limited", Status: 429},
			c.Counters.RecordAttempt(ctx, "", addr, false, purpose+"address_limited", now)
	}
	out, err := c.checkUser(ctx, u, try, pw, code, now)
	if err != nil {
		return Outcome{}, err
	}
	login := ""
	if out.User != nil {
		login = out.User.Login
	}
	return out, c.Counters.FinishAttempt(ctx, attempt, login, out.OK, purpose+out.Reason)
}

// checkUser takes the user's slot and checks; an unknown user's try costs
// the same hash and is not counted against anyone.
func (c *Checker) checkUser(ctx context.Context, u *Candidate, try *Try, pw, code string, now time.Time) (Outcome, error) {
	if u == nil {
		CheckPassword(DummyHash(), pw) // the same cost as a known login
		return Outcome{Reason: "unknown_login"}, nil
	}
	slot, err := c.Counters.TakeUserSlot(ctx, u.ID, c.LockoutFailures, now, now.Add(c.LockoutFor))
	if err != nil {
		return Outcome{}, err
	}
	if slot == 0 {
		CheckPassword(DummyHash(), pw) // locked: not checked, at the same cost
		return Outcome{User: u, Reason: "locked"}, nil
	}
	return c.checkSlot(ctx, u, slot, try, pw, code, now)
}

// checkSlot checks a try that holds the user's slot: the hash, then what
// only the right password may learn (disabled, the code, a burst).
func (c *Checker) checkSlot(ctx context.Context, u *Candidate, slot int, try *Try, pw, code string, now time.Time) (Outcome, error) {
	if c.BeforeHash != nil {
		c.BeforeHash()
	}
	out := Outcome{User: u, Locked: slot >= c.LockoutFailures}
	if !CheckPassword(u.PasswordHash, pw) {
		out.Reason = "bad_password"
		return out, nil
	}
	if u.Disabled {
		out.Reason = "disabled"
		return out, nil
	}
	step, err := u.TOTPStep(code, now)
	if err != nil {
		return Outcome{}, err
	}
	if step < 0 {
		out.Reason = "bad_totp"
		return out, nil
	}
	if c.tries.Crowded(try) {
		out.Reason = "concurrent"
		return out, nil
	}
	if out.Reason, err = c.Counters.Succeed(ctx, u.ID, slot, step); err != nil || out.Reason != "" {
		return out, err
	}
	return Outcome{User: u, OK: true, Reason: "ok"}, nil
}

// takeHashSlot takes a place among the hashes, waiting at most hashWait
// (or until ctx ends).
func (c *Checker) takeHashSlot(ctx context.Context) bool {
	select {
	case c.Slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(hashWait)
	defer t.Stop()
	select {
	case c.Slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
