package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// Over cells (docs/scaling.md, "The console over cells") the house's
// users are the home cell's. A cell's own rows that name a house user by a
// foreign key (an adjustment's proposer and checker) need that user's row
// in the cell too: a mirror, made when the user first acts there. It keeps
// the id, login and role; it is disabled and holds no secret (a hash no
// password matches, an empty TOTP seal), so it never signs in anywhere.

// mirrorHashOfNone is the mirror's: of the argon2id form the table
// requires, and the hash of no password.
const mirrorHashOfNone = "$argon2id$mirror-of-a-home-cell-user"

// MirrorHouseUser makes sure the house's user id of this store (the home
// cell's) has its mirror in the cell's database: inserted when missing,
// its login and role brought level when present. A user that is not the
// house's is an error.
func (s *Store) MirrorHouseUser(ctx context.Context, cell bun.IDB, id int64) error {
	var u struct {
		Login string `bun:"login"`
		Role  string `bun:"role"`
	}
	err := s.db.NewRaw(`select login, role from console_users where id = ? and merchant_id is null`, id).Scan(ctx, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("console: user %d is no house user of the home cell", id)
	}
	if err != nil {
		return err
	}
	_, err = cell.NewRaw(`insert into console_users (id, login, merchant_id, role, password_hash, totp_sealed, disabled)
		values (?, ?, null, ?, ?, '\x'::bytea, true)
		on conflict (id) do update set login = excluded.login, role = excluded.role
		where console_users.merchant_id is null`, id, u.Login, u.Role, mirrorHashOfNone).Exec(ctx)
	return err
}
