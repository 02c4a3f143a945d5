package store

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// A user's change of their own password, in one transaction: the hash,
// the TOTP step taken, the lockout cleared, the session rotated and every
// other session of the user ended.

var (
	ErrTOTPReplayed = errors.New("console: the TOTP code was used already")
	ErrSessionGone  = errors.New("console: the session has ended")
)

// PasswordChange is one change of a user's own password.
type PasswordChange struct {
	User               int64
	Hash               string
	Step               int64 // the TOTP step of the code given; 0 without one
	OldToken, NewToken []byte
	Now                time.Time
	Addr               string
}

// ChangePassword stores the new hash and returns how many other sessions
// it ended. The session doing it is moved to the new token with its login
// time and absolute end kept, so a change extends nothing.
func (s *Store) ChangePassword(ctx context.Context, c PasswordChange) (ended int64, err error) {
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		n, err := rowsOf(tx.NewRaw(`update console_users
			set password_hash = ?1, failed_count = 0, locked_until = null, totp_last_step = greatest(totp_last_step, ?2)
			where id = ?0 and (?2 = 0 or totp_last_step < ?2)`, c.User, c.Hash, c.Step).Exec(ctx))
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrTOTPReplayed
		}
		n, err = rowsOf(tx.NewRaw(`insert into console_sessions (token_sha256, user_id, created_at, last_seen_at, expires_at, address)
			select ?1, user_id, created_at, ?3, expires_at, ?4 from console_sessions where token_sha256 = ?0 and user_id = ?2`,
			c.OldToken, c.NewToken, c.User, c.Now, c.Addr).Exec(ctx))
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrSessionGone
		}
		// The old token of this session is one of these: not counted.
		ended, err = rowsOf(tx.NewRaw(`delete from console_sessions where user_id = ?0 and token_sha256 <> ?1`,
			c.User, c.NewToken).Exec(ctx))
		return err
	})
	if err != nil {
		return 0, err
	}
	return ended - 1, nil
}
