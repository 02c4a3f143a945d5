package console

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// A merchant's console users, for its admin's page: every query names the
// merchant, so another merchant's user is not found.

// merchantUser is a user as the users page lists it.
type merchantUser struct {
	ID          int64
	Login       string
	Role        Role
	Disabled    bool
	LockedUntil *time.Time // set while a lockout lasts
	CreatedAt   time.Time
}

const merchantUserColumns = `id, login, role, disabled, case when locked_until > $2 then locked_until end, created_at`

func scanMerchantUser(sc interface{ Scan(...any) error }) (merchantUser, error) {
	var u merchantUser
	var locked sql.NullTime
	err := sc.Scan(&u.ID, &u.Login, &u.Role, &u.Disabled, &locked, &u.CreatedAt)
	if locked.Valid {
		t := locked.Time
		u.LockedUntil = &t
	}
	return u, err
}

func (s *store) merchantUsers(ctx context.Context, merchant int64, now time.Time) ([]merchantUser, error) {
	rows, err := s.db.QueryContext(ctx, `select `+merchantUserColumns+` from console_users
		where merchant_id = $1 order by login limit $3`, merchant, now, merchantUsersMax)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []merchantUser
	for rows.Next() {
		u, err := scanMerchantUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// merchantUser is one user of merchant; nil when there is none with that
// id (or it is another merchant's, or the house's).
func (s *store) merchantUser(ctx context.Context, merchant, id int64, now time.Time) (*merchantUser, error) {
	u, err := scanMerchantUser(s.db.QueryRowContext(ctx, `select `+merchantUserColumns+` from console_users
		where merchant_id = $1 and id = $3`, merchant, now, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &u, nil
}

func (s *store) countMerchantUsers(ctx context.Context, merchant int64) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `select count(*) from console_users where merchant_id = $1`, merchant).Scan(&n)
	return n, err
}

// setUserDisabled disables or enables a user; disabling also ends the
// user's sessions (they would stop at their next request anyway).
func (s *store) setUserDisabled(ctx context.Context, merchant, id int64, disabled bool) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `update console_users set disabled = $3 where merchant_id = $1 and id = $2`,
		merchant, id, disabled); err != nil {
		return err
	}
	if disabled {
		if _, err := tx.ExecContext(ctx, `delete from console_sessions where user_id = $1`, id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// setUserPassword replaces a user's password, clears a lockout and ends
// the user's sessions: a reset usually follows a password that got out.
func (s *store) setUserPassword(ctx context.Context, merchant, id int64, hash string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `update console_users set password_hash = $3, failed_count = 0, locked_until = null
		where merchant_id = $1 and id = $2`, merchant, id, hash); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `delete from console_sessions where user_id = $1`, id); err != nil {
		return err
	}
	return tx.Commit()
}
