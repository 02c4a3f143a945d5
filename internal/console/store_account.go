package console

import (
	"context"
	"errors"
	"time"
)

// A user's change of their own password (account.go), in one transaction:
// the hash, the TOTP step taken, the lockout cleared, the session rotated
// and every other session of the user ended.

var (
	errTOTPReplayed = errors.New("console: the TOTP code was used already")
	errSessionGone  = errors.New("console: the session has ended")
)

type passwordChange struct {
	user               int64
	hash               string
	step               int64 // the TOTP step of the code given; 0 without one
	oldToken, newToken []byte
	now                time.Time
	addr               string
}

// changePassword stores the new hash and returns how many other sessions
// it ended. The session doing it is moved to the new token with its login
// time and absolute end kept, so a change extends nothing.
func (s *store) changePassword(ctx context.Context, c passwordChange) (ended int64, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	n, err := rowsOf(tx.ExecContext(ctx, `update console_users
		set password_hash = $2, failed_count = 0, locked_until = null, totp_last_step = greatest(totp_last_step, $3)
		where id = $1 and ($3 = 0 or totp_last_step < $3)`, c.user, c.hash, c.step))
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errTOTPReplayed
	}
	n, err = rowsOf(tx.ExecContext(ctx, `insert into console_sessions (token_sha256, user_id, created_at, last_seen_at, expires_at, address)
		select $2, user_id, created_at, $4, expires_at, $5 from console_sessions where token_sha256 = $1 and user_id = $3`,
		c.oldToken, c.newToken, c.user, c.now, c.addr))
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errSessionGone
	}
	// The old token of this session is one of these: not counted.
	if ended, err = rowsOf(tx.ExecContext(ctx, `delete from console_sessions where user_id = $1 and token_sha256 <> $2`,
		c.user, c.newToken)); err != nil {
		return 0, err
	}
	return ended - 1, tx.Commit()
}
