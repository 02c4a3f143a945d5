// Package store is the console's own tables (sql/0012_console.sql and
// later): its users, sessions, login attempts and audit trail. Only this
// package writes their SQL (internal/archtest, tableOwners); it reads no
// other package's table — a user's merchant (shop number, name, status)
// is the console's to ask internal/merchant for. The style is the
// project's one (docs/architecture.md, "One SQL style"): bun on the
// gateway's pool, NewRaw with ?n bind parameters.
package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Store runs the console's statements on db: the pool, shared with the
// ledger (one pool, one set of connections).
type Store struct{ db bun.IDB }

// New is the store on db.
func New(db bun.IDB) *Store { return &Store{db: db} }

// DB is the pool the store runs on, for a caller that writes a user in its
// own transaction with an audit row (Atomically).
func (s *Store) DB() bun.IDB { return s.db }

// UserRow is a user as login reads it: the console adds the merchant's
// shop number, name and status from internal/merchant.
type UserRow struct {
	ID           int64        `bun:"id"`
	Login        string       `bun:"login"`
	Role         string       `bun:"role"`
	MerchantID   int64        `bun:"merchant_id"` // 0 for the house's users
	PasswordHash string       `bun:"password_hash"`
	TOTPSealed   []byte       `bun:"totp_sealed"`
	TOTPLastStep int64        `bun:"totp_last_step"`
	FailedCount  int          `bun:"failed_count"`
	LockedUntil  sql.NullTime `bun:"locked_until"`
	Disabled     bool         `bun:"disabled"`
}

const userColumns = `id, login, role, coalesce(merchant_id, 0) as merchant_id, password_hash, totp_sealed,
	totp_last_step, failed_count, locked_until, disabled`

// UserInScope is the user of login in a scope: merchant's users, or the
// house's when merchant is 0 (logins are unique per scope, sql/0017). nil
// when there is none. The condition is the unique index's expression, so
// the lookup is one index probe.
func (s *Store) UserInScope(ctx context.Context, merchant int64, login string) (*UserRow, error) {
	return s.userWhere(ctx, `coalesce(merchant_id, 0) = ?0 and login = ?1`, merchant, login)
}

// UserByID is the user with id; nil when there is none.
func (s *Store) UserByID(ctx context.Context, id int64) (*UserRow, error) {
	return s.userWhere(ctx, `id = ?0`, id)
}

func (s *Store) userWhere(ctx context.Context, where string, args ...any) (*UserRow, error) {
	var u UserRow
	err := s.db.NewRaw(`select `+userColumns+` from console_users where `+where, args...).Scan(ctx, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// RecordAttempt writes an attempt that took no slot (a malformed form, an
// address at its limit): it checked nothing. login is stored only when it
// names a user (FinishAttempt).
func (s *Store) RecordAttempt(ctx context.Context, login, addr string, ok bool, reason string, at time.Time) error {
	_, err := s.db.NewRaw(`insert into console_login_attempts (login, address, ok, reason, created_at)
		values (?0, ?1, ?2, ?3, ?4)`, Clip(login, 64), addr, ok, reason, at).Exec(ctx)
	return err
}

// CreateSession stores a session by its token's hash.
func (s *Store) CreateSession(ctx context.Context, hash []byte, user int64, now, expires time.Time, addr string) error {
	_, err := s.db.NewRaw(`insert into console_sessions (token_sha256, user_id, created_at, last_seen_at, expires_at, address)
		values (?0, ?1, ?2, ?2, ?3, ?4)`, hash, user, now, expires, addr).Exec(ctx)
	return err
}

// PurgeSessions deletes sessions past their absolute or idle end, a
// bounded number at a time.
func (s *Store) PurgeSessions(ctx context.Context, now time.Time, idle time.Duration) error {
	_, err := s.db.NewRaw(`delete from console_sessions where token_sha256 in (
		select token_sha256 from console_sessions where expires_at <= ?0 or last_seen_at <= ?1 limit 1000)`,
		now, now.Add(-idle)).Exec(ctx)
	return err
}

// TouchSession returns the user of a live session and marks it seen now;
// nil when the session is unknown, past its absolute or idle end, or its
// user is disabled. Whether the user's merchant is still active is the
// console's check (it asks internal/merchant).
func (s *Store) TouchSession(ctx context.Context, hash []byte, now time.Time, idle time.Duration) (*UserRow, error) {
	var u UserRow
	err := s.db.NewRaw(`
		with s as (
			update console_sessions set last_seen_at = ?1
			where token_sha256 = ?0 and expires_at > ?1 and last_seen_at > ?2
			returning user_id)
		select u.id, u.login, u.role, coalesce(u.merchant_id, 0) as merchant_id
		from s join console_users u on u.id = s.user_id
		where not u.disabled`, hash, now, now.Add(-idle)).Scan(ctx, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// DeleteSession ends the session of a token's hash.
func (s *Store) DeleteSession(ctx context.Context, hash []byte) error {
	_, err := s.db.NewRaw(`delete from console_sessions where token_sha256 = ?0`, hash).Exec(ctx)
	return err
}

// EndMerchantSessions deletes the sessions of a merchant's users, at once
// when the operator disables the merchant from the console (the session
// check would end each at its next request anyway).
func (s *Store) EndMerchantSessions(ctx context.Context, merchant int64) error {
	_, err := s.db.NewRaw(`delete from console_sessions
		where user_id in (select id from console_users where merchant_id = ?0)`, merchant).Exec(ctx)
	return err
}

// Clip cuts s to at most n bytes, on a character boundary.
func Clip(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "")
	}
	return s
}

// rowsOf is the number of rows a statement changed, or its error.
func rowsOf(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
