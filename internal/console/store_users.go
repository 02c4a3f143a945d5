package console

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/gateway/postings"
)

// The console users one page manages: a merchant's (its admin's /users)
// or the house's (an operator's /house/users). Every query names the
// scope, so a user outside it is not found: another merchant's user on a
// merchant's page, any merchant's on the house's, the house's on a
// merchant's.

// listedUser is a user as the users pages list it.
type listedUser struct {
	ID          int64
	Login       string
	Role        Role
	Disabled    bool
	LockedUntil *time.Time // set while a lockout lasts
	CreatedAt   time.Time
}

const listedUserColumns = `id, login, role, disabled, case when locked_until > $2 then locked_until end, created_at`

// The conditions on console_users of a scope, with the merchant as $1: a
// merchant's users, or the house's (merchant 0). Two conditions rather
// than one "is not distinct from", so that a merchant's list uses
// console_users_merchant_idx; each statement is a constant per scope.
const (
	merchantScope = `merchant_id = $1`
	houseScope    = `merchant_id is null and $1::bigint = 0`
)

type scopeQueries struct{ list, one, count, disable, password string }

var merchantQueries = scopeQueries{
	list:     `select ` + listedUserColumns + ` from console_users where ` + merchantScope + ` order by login limit $3`,
	one:      `select ` + listedUserColumns + ` from console_users where ` + merchantScope + ` and id = $3`,
	count:    `select count(*) from console_users where ` + merchantScope,
	disable:  `update console_users set disabled = $3 where ` + merchantScope + ` and id = $2`,
	password: `update console_users set password_hash = $3, failed_count = 0, locked_until = null where ` + merchantScope + ` and id = $2`,
}

var houseQueries = scopeQueries{
	list:     `select ` + listedUserColumns + ` from console_users where ` + houseScope + ` order by login limit $3`,
	one:      `select ` + listedUserColumns + ` from console_users where ` + houseScope + ` and id = $3`,
	count:    `select count(*) from console_users where ` + houseScope,
	disable:  `update console_users set disabled = $3 where ` + houseScope + ` and id = $2`,
	password: `update console_users set password_hash = $3, failed_count = 0, locked_until = null where ` + houseScope + ` and id = $2`,
}

func queriesOf(merchant int64) *scopeQueries {
	if merchant == 0 {
		return &houseQueries
	}
	return &merchantQueries
}

func scanListedUser(sc interface{ Scan(...any) error }) (listedUser, error) {
	var u listedUser
	var locked sql.NullTime
	err := sc.Scan(&u.ID, &u.Login, &u.Role, &u.Disabled, &locked, &u.CreatedAt)
	if locked.Valid {
		t := locked.Time
		u.LockedUntil = &t
	}
	return u, err
}

// scopedUsers lists the scope's users by login, at most limit.
func (s *store) scopedUsers(ctx context.Context, merchant int64, now time.Time, limit int) ([]listedUser, error) {
	rows, err := s.db.QueryContext(ctx, queriesOf(merchant).list, merchant, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []listedUser
	for rows.Next() {
		u, err := scanListedUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// scopedUser is one user of the scope; nil when there is none with that
// id in it.
func (s *store) scopedUser(ctx context.Context, merchant, id int64, now time.Time) (*listedUser, error) {
	u, err := scanListedUser(s.db.QueryRowContext(ctx, queriesOf(merchant).one, merchant, now, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &u, nil
}

func (s *store) countScopedUsers(ctx context.Context, merchant int64) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, queriesOf(merchant).count, merchant).Scan(&n)
	return n, err
}

// errNotInScope is a change to a user the scope does not hold (gone
// between the page's read and the change): nothing is done.
var errNotInScope error = postings.Errorf(postings.ENOTFOUND, "no such user")

// setUserDisabled disables or enables a user of the scope in tx (with its
// audit row, audit_atomic.go); disabling also ends the user's sessions
// (they would stop at their next request anyway).
func setUserDisabled(ctx context.Context, tx *sql.Tx, merchant, id int64, disabled bool) error {
	res, err := tx.ExecContext(ctx, queriesOf(merchant).disable, merchant, id, disabled)
	if n, err := rowsOf(res, err); err != nil || n == 0 {
		return cmp.Or(err, errNotInScope)
	}
	if disabled {
		if _, err := tx.ExecContext(ctx, `delete from console_sessions where user_id = $1`, id); err != nil {
			return err
		}
	}
	return nil
}

// setUserPassword replaces the password of a user of the scope in tx,
// clears a lockout and ends the user's sessions: a reset usually follows a
// password that got out.
func setUserPassword(ctx context.Context, tx *sql.Tx, merchant, id int64, hash string) error {
	res, err := tx.ExecContext(ctx, queriesOf(merchant).password, merchant, id, hash)
	if n, err := rowsOf(res, err); err != nil || n == 0 {
		return cmp.Or(err, errNotInScope)
	}
	_, err = tx.ExecContext(ctx, `delete from console_sessions where user_id = $1`, id)
	return err
}

// rowsOf is the number of rows a statement changed, or its error.
func rowsOf(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
