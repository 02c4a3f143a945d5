package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// The statements that make the lockout atomic (docs/console.md, "Lockout:
// a try is taken before it is checked"). A password is checked only after
// the try has been counted, by one statement that cannot count past the
// limit whatever runs beside it: the per-address limit's slot is the
// attempt row itself, inserted under a lock of the address; the user's is
// failed_count, raised by an UPDATE whose WHERE refuses a locked user
// (PostgreSQL re-reads the row after waiting for a concurrent UPDATE of
// it, so two tries never both take the last slot).

// addressLockKey names the advisory lock of one address's tries.
const addressLockKey = `hashtextextended('console-login-address:' || ?0, 0)`

// TakeAddressSlot counts a try of addr before anything is checked: under a
// transaction-scoped advisory lock of the address, it inserts the try's
// attempt row ('checking', not ok, so counted as a failure until it is
// finished) when the address has fewer than limit failures since since.
// It returns the row's id, or 0 when the address is at its limit. A
// process that dies before finishing the row leaves it counted: the safe
// side.
func (s *Store) TakeAddressSlot(ctx context.Context, addr string, since, now time.Time, limit int) (int64, error) {
	var id int64
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`select pg_advisory_xact_lock(`+addressLockKey+`)`, addr).Exec(ctx); err != nil {
			return err
		}
		err := tx.NewRaw(`insert into console_login_attempts (login, address, ok, reason, created_at)
			select '', ?0, false, 'checking', ?1
			where (select count(*) from console_login_attempts where address = ?0 and created_at >= ?2 and not ok) < ?3
			returning id`, addr, now, since, limit).Scan(ctx, &id)
		if errors.Is(err, sql.ErrNoRows) {
			id = 0
			return nil
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// FinishAttempt writes the outcome of the try whose slot is row id. login
// is stored only when it names a user (issue 27, 8c): text typed into the
// login box that is no one's may be a password typed in the wrong box.
func (s *Store) FinishAttempt(ctx context.Context, id int64, login string, ok bool, reason string) error {
	_, err := s.db.NewRaw(`update console_login_attempts set login = ?1, ok = ?2, reason = ?3 where id = ?0`,
		id, Clip(login, 64), ok, reason).Exec(ctx)
	return err
}

// TakeUserSlot counts a try of a user's password before it is checked: it
// raises failed_count (a lockout that has ended starts a new window at 1)
// and, when that reaches lockAfter, locks the user until until. It returns
// the try's number in the window, or 0 when the user is locked: that try
// is not checked at all. A success clears the count (Succeed).
func (s *Store) TakeUserSlot(ctx context.Context, user int64, lockAfter int, now, until time.Time) (int, error) {
	const next = `(case when locked_until <= ?1 then 1 else failed_count + 1 end)`
	var slot int
	err := s.db.NewRaw(`update console_users set
		failed_count = `+next+`,
		locked_until = case when `+next+` >= ?2 then ?3 when locked_until <= ?1 then null else locked_until end
		where id = ?0 and (locked_until is null or locked_until <= ?1)
		returning failed_count`, user, now, lockAfter, until).Scan(ctx, &slot)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return slot, err
}

// Succeed clears the user's count and lockout and takes the TOTP step
// (when step > 0), only if slot is still the last try taken: a try of the
// user that began while this one was checked makes even the right
// password a refused try (a person types one at a time; a burst is an
// attack, and its right guess must not slip in beside the wrong ones). It
// returns "" on success, else the reason of the refusal: "concurrent" or
// "totp_replayed".
func (s *Store) Succeed(ctx context.Context, user int64, slot int, step int64) (string, error) {
	n, err := rowsOf(s.db.NewRaw(`update console_users
		set failed_count = 0, locked_until = null, totp_last_step = greatest(totp_last_step, ?2)
		where id = ?0 and failed_count = ?1 and (?2 = 0 or totp_last_step < ?2)`, user, slot, step).Exec(ctx))
	if err != nil || n == 1 {
		return "", err
	}
	var last bool
	if err := s.db.NewRaw(`select failed_count = ?1 from console_users where id = ?0`, user, slot).Scan(ctx, &last); err != nil {
		return "", err
	}
	if last {
		return "totp_replayed", nil
	}
	return "concurrent", nil
}
