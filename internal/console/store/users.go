package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// The console users one page manages: a merchant's (its admin's /users)
// or the house's (an operator's /house/users). Every query names the
// scope, so a user outside it is not found: another merchant's user on a
// merchant's page, any merchant's on the house's, the house's on a
// merchant's.

// ListedUser is a user as the users pages list it.
type ListedUser struct {
	ID          int64      `bun:"id"`
	Login       string     `bun:"login"`
	Role        string     `bun:"role"`
	Disabled    bool       `bun:"disabled"`
	LockedUntil *time.Time `bun:"locked_until"` // set while a lockout lasts
	CreatedAt   time.Time  `bun:"created_at"`
}

const listedUserColumns = `id, login, role, disabled, case when locked_until > ?1 then locked_until end as locked_until, created_at`

// The conditions on console_users of a scope, with the merchant as ?0: a
// merchant's users, or the house's (merchant 0). Two conditions rather
// than one "is not distinct from", so that a merchant's list uses
// console_users_merchant_idx; each statement is a constant per scope.
const (
	merchantScope = `merchant_id = ?0`
	houseScope    = `merchant_id is null and ?0::bigint = 0`
)

type scopeQueries struct{ list, one, count, disable, password string }

func scopeOf(scope string) scopeQueries {
	return scopeQueries{
		list:     `select ` + listedUserColumns + ` from console_users where ` + scope + ` order by login limit ?2`,
		one:      `select ` + listedUserColumns + ` from console_users where ` + scope + ` and id = ?2`,
		count:    `select count(*) from console_users where ` + scope,
		disable:  `update console_users set disabled = ?2 where ` + scope + ` and id = ?1`,
		password: `update console_users set password_hash = ?2, failed_count = 0, locked_until = null where ` + scope + ` and id = ?1`,
	}
}

var merchantQueries, houseQueries = scopeOf(merchantScope), scopeOf(houseScope)

func queriesOf(merchant int64) *scopeQueries {
	if merchant == 0 {
		return &houseQueries
	}
	return &merchantQueries
}

// ScopedUsers lists the scope's users by login, at most limit.
func (s *Store) ScopedUsers(ctx context.Context, merchant int64, now time.Time, limit int) ([]ListedUser, error) {
	var out []ListedUser
	err := s.db.NewRaw(queriesOf(merchant).list, merchant, now, limit).Scan(ctx, &out)
	return out, err
}

// ScopedUser is one user of the scope; nil when there is none with that
// id in it.
func (s *Store) ScopedUser(ctx context.Context, merchant, id int64, now time.Time) (*ListedUser, error) {
	var u ListedUser
	err := s.db.NewRaw(queriesOf(merchant).one, merchant, now, id).Scan(ctx, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// CountScopedUsers is how many users the scope has.
func (s *Store) CountScopedUsers(ctx context.Context, merchant int64) (int, error) {
	var n int
	err := s.db.NewRaw(queriesOf(merchant).count, merchant).Scan(ctx, &n)
	return n, err
}

// ErrNotInScope is a change to a user the scope does not hold (gone
// between the page's read and the change): nothing is done.
var ErrNotInScope error = postings.Errorf(postings.ENOTFOUND, "no such user")

// SetUserDisabled disables or enables a user of the scope in tx (with its
// audit row, Atomically); disabling also ends the user's sessions (they
// would stop at their next request anyway).
func SetUserDisabled(ctx context.Context, tx bun.IDB, merchant, id int64, disabled bool) error {
	if n, err := rowsOf(tx.NewRaw(queriesOf(merchant).disable, merchant, id, disabled).Exec(ctx)); err != nil || n == 0 {
		return cmp.Or(err, ErrNotInScope)
	}
	if disabled {
		return endUserSessions(ctx, tx, id)
	}
	return nil
}

// SetUserPassword replaces the password of a user of the scope in tx,
// clears a lockout and ends the user's sessions: a reset usually follows a
// password that got out.
func SetUserPassword(ctx context.Context, tx bun.IDB, merchant, id int64, hash string) error {
	if n, err := rowsOf(tx.NewRaw(queriesOf(merchant).password, merchant, id, hash).Exec(ctx)); err != nil || n == 0 {
		return cmp.Or(err, ErrNotInScope)
	}
	return endUserSessions(ctx, tx, id)
}

func endUserSessions(ctx context.Context, tx bun.IDB, user int64) error {
	_, err := tx.NewRaw(`delete from console_sessions where user_id = ?0`, user).Exec(ctx)
	return err
}

// NewUserRow is a checked user to insert, its password hashed and its
// TOTP secret sealed.
type NewUserRow struct {
	Login        string
	MerchantID   int64 // 0 for the house's
	Role         string
	PasswordHash string
	TOTPSealed   []byte
}

// InsertUser writes u through db (the pool, or the transaction that writes
// the user's audit row with it) and gives its id; 0 when the scope has a
// user of that login already.
func InsertUser(ctx context.Context, db bun.IDB, u NewUserRow) (int64, error) {
	var id int64
	err := db.NewRaw(`insert into console_users (login, merchant_id, role, password_hash, totp_sealed)
		values (?0, ?1, ?2, ?3, ?4) on conflict ((coalesce(merchant_id, 0)), login) do nothing returning id`,
		u.Login, nullID(u.MerchantID), u.Role, u.PasswordHash, u.TOTPSealed).Scan(ctx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// HasUser tells whether a user of login exists in a scope: the merchant's
// (merchant > 0) or the house's (0).
func HasUser(ctx context.Context, db bun.IDB, login string, merchant int64) (bool, error) {
	var known bool
	err := db.NewRaw(`select exists (select 1 from console_users where login = ?0 and coalesce(merchant_id, 0) = ?1)`,
		login, merchant).Scan(ctx, &known)
	return known, err
}

// nullID is a merchant id as a column that is null for the house.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
