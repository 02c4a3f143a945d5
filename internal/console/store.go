package console

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// The console's own tables (sql/0012_console.sql), through database/sql
// with bind parameters only.

// User is a signed-in console user.
type User struct {
	ID         int64
	Login      string
	Role       Role
	MerchantID int64 // 0 for the house's users
	ShopNo     string
	Merchant   string // the merchant's name
}

// userRow is a user as login reads it.
type userRow struct {
	User
	passwordHash string
	totpSealed   []byte
	totpLastStep int64
	failedCount  int
	lockedUntil  sql.NullTime
	disabled     bool
}

type store struct{ db *sql.DB }

func (s *store) userByLogin(ctx context.Context, login string) (*userRow, error) {
	var u userRow
	var mid sql.NullInt64
	var shop, name sql.NullString
	err := s.db.QueryRowContext(ctx, `
		select u.id, u.login, u.role, u.merchant_id, m.shop_no, m.name, u.password_hash, u.totp_sealed,
		       u.totp_last_step, u.failed_count, u.locked_until, u.disabled or `+merchantDisabledSQL+`
		from console_users u left join merchants m on m.id = u.merchant_id
		where u.login = $1`, login).Scan(&u.ID, &u.Login, &u.Role, &mid, &shop, &name, &u.passwordHash, &u.totpSealed,
		&u.totpLastStep, &u.failedCount, &u.lockedUntil, &u.disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	u.MerchantID, u.ShopNo, u.Merchant = mid.Int64, shop.String, name.String
	return &u, err
}

func (s *store) recordAttempt(ctx context.Context, login, addr string, ok bool, reason string, at time.Time) error {
	if len(login) > 64 {
		login = login[:64]
	}
	_, err := s.db.ExecContext(ctx, `insert into console_login_attempts (login, address, ok, reason, created_at)
		values ($1, $2, $3, $4, $5)`, login, addr, ok, reason, at)
	return err
}

// addressFailures counts the failed logins from addr since since.
func (s *store) addressFailures(ctx context.Context, addr string, since time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `select count(*) from console_login_attempts
		where address = $1 and created_at >= $2 and not ok`, addr, since).Scan(&n)
	return n, err
}

// loginFailed counts a failure and locks the user once it is the
// lockAfter-th in a row; locked says whether the user is now locked.
func (s *store) loginFailed(ctx context.Context, user int64, lockAfter int, until time.Time) (locked bool, err error) {
	err = s.db.QueryRowContext(ctx, `update console_users
		set failed_count = failed_count + 1,
		    locked_until = case when failed_count + 1 >= $2 then $3 else locked_until end
		where id = $1 returning failed_count >= $2`, user, lockAfter, until).Scan(&locked)
	return locked, err
}

// loginSucceeded clears the failures and, when step > 0, takes the TOTP
// step; false when the step was already used (a replayed code).
func (s *store) loginSucceeded(ctx context.Context, user, step int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `update console_users
		set failed_count = 0, locked_until = null, totp_last_step = greatest(totp_last_step, $2)
		where id = $1 and ($2 = 0 or totp_last_step < $2)`, user, step)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (s *store) createSession(ctx context.Context, hash []byte, user int64, now, expires time.Time, addr string) error {
	_, err := s.db.ExecContext(ctx, `insert into console_sessions (token_sha256, user_id, created_at, last_seen_at, expires_at, address)
		values ($1, $2, $3, $3, $4, $5)`, hash, user, now, expires, addr)
	return err
}

// purgeSessions deletes sessions past their absolute or idle end, a
// bounded number at a time.
func (s *store) purgeSessions(ctx context.Context, now time.Time, idle time.Duration) error {
	_, err := s.db.ExecContext(ctx, `delete from console_sessions where token_sha256 in (
		select token_sha256 from console_sessions where expires_at <= $1 or last_seen_at <= $2 limit 1000)`,
		now, now.Add(-idle))
	return err
}

// touchSession returns the user of a live session and marks it seen now;
// nil when the session is unknown, past its absolute or idle end, or its
// user is disabled; a session of a disabled merchant's user is deleted.
func (s *store) touchSession(ctx context.Context, hash []byte, now time.Time, idle time.Duration) (*User, error) {
	var u User
	var mid sql.NullInt64
	var shop, name sql.NullString
	var merchantOff bool
	err := s.db.QueryRowContext(ctx, `
		with s as (
			update console_sessions set last_seen_at = $2
			where token_sha256 = $1 and expires_at > $2 and last_seen_at > $3
			returning user_id)
		select u.id, u.login, u.role, u.merchant_id, m.shop_no, m.name, `+merchantDisabledSQL+`
		from s join console_users u on u.id = s.user_id left join merchants m on m.id = u.merchant_id
		where not u.disabled`, hash, now, now.Add(-idle)).Scan(&u.ID, &u.Login, &u.Role, &mid, &shop, &name, &merchantOff)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err == nil && merchantOff {
		return nil, s.deleteSession(ctx, hash) // the session ends (merchant_active.go)
	}
	u.MerchantID, u.ShopNo, u.Merchant = mid.Int64, shop.String, name.String
	return &u, err
}

func (s *store) deleteSession(ctx context.Context, hash []byte) error {
	_, err := s.db.ExecContext(ctx, `delete from console_sessions where token_sha256 = $1`, hash)
	return err
}

// auditEntry is one row of the console's audit trail.
type auditEntry struct {
	ID         int64
	At         time.Time
	UserID     int64
	Login      string
	Role       string
	MerchantID int64
	Action     string
	Target     string
	Detail     string
	Outcome    string
	Address    string
	ErrorCode  string // a failed domain command's postings.Code
	// Shown is the outcome as the trail page says it: "unknown" for a row
	// pending longer than auditPendingFor (audit_intent.go).
	Shown string
}

func (s *store) audit(ctx context.Context, e auditEntry) error {
	_, err := insertAudit(ctx, s.db, e) // its values made safe by entryOf (audit_trail.go)
	return err
}

// auditTrail lists the newest entries with id below before (0: the newest).
func (s *store) auditTrail(ctx context.Context, before int64, limit int) ([]auditEntry, error) {
	rows, err := s.db.QueryContext(ctx, `select id, at, user_id, login, role, coalesce(merchant_id, 0), action, target, detail, outcome, address, error_code
		from console_audit where ($1 = 0 or id < $1) order by id desc limit $2`, before, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auditEntry
	for rows.Next() {
		var e auditEntry
		if err := rows.Scan(&e.ID, &e.At, &e.UserID, &e.Login, &e.Role, &e.MerchantID, &e.Action, &e.Target, &e.Detail, &e.Outcome, &e.Address, &e.ErrorCode); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// clip cuts s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "")
	}
	return s
}
