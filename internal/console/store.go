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

// userColumns are a userRow's, from console_users u left join merchants m.
const userColumns = `u.id, u.login, u.role, u.merchant_id, m.shop_no, m.name, u.password_hash, u.totp_sealed,
	u.totp_last_step, u.failed_count, u.locked_until, u.disabled or ` + merchantDisabledSQL

// userInScope is the user of login in a scope: the merchant whose shop
// number is shopNo, or the house's when shopNo is empty (logins are unique
// per scope, sql/0017). nil when there is none; an unknown shop number is
// a scope with no users. The condition is the unique index's expression,
// so the lookup is one index probe.
func (s *store) userInScope(ctx context.Context, shopNo, login string) (*userRow, error) {
	return scanUserRow(s.db.QueryRowContext(ctx, `select `+userColumns+`
		from console_users u left join merchants m on m.id = u.merchant_id
		where coalesce(u.merchant_id, 0) = coalesce((select id from merchants where shop_no = $2), case when $2 = '' then 0 else -1 end)
		  and u.login = $1`, login, shopNo))
}

// userByID is the user with id; nil when there is none.
func (s *store) userByID(ctx context.Context, id int64) (*userRow, error) {
	return scanUserRow(s.db.QueryRowContext(ctx, `select `+userColumns+`
		from console_users u left join merchants m on m.id = u.merchant_id where u.id = $1`, id))
}

func scanUserRow(row *sql.Row) (*userRow, error) {
	var u userRow
	var mid sql.NullInt64
	var shop, name sql.NullString
	err := row.Scan(&u.ID, &u.Login, &u.Role, &mid, &shop, &name, &u.passwordHash, &u.totpSealed,
		&u.totpLastStep, &u.failedCount, &u.lockedUntil, &u.disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	u.MerchantID, u.ShopNo, u.Merchant = mid.Int64, shop.String, name.String
	return &u, err
}

// recordAttempt writes an attempt that took no slot (a malformed form, an
// address at its limit): it checked nothing. login is stored only when it
// names a user (finishAttempt).
func (s *store) recordAttempt(ctx context.Context, login, addr string, ok bool, reason string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `insert into console_login_attempts (login, address, ok, reason, created_at)
		values ($1, $2, $3, $4, $5)`, clip(login, 64), addr, ok, reason, at)
	return err
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
