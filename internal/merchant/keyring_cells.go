package merchant

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// Key versions over cells (docs/scaling.md): every cell has the same data
// key, and a rotation must give every cell the same version too — the same
// number and the same wrapped key — because a merchant moved between cells
// keeps its sealed values as they are (internal/cellmove checks both). So
// the version is made once (NewVersion) and added to each cell
// (AddVersion), each in its own transaction; one added already is no
// change, so a rotation cut short is resumed by running it again.

// KeyVersion is one key version as data_key_versions keeps it: its number
// and its key wrapped under the data key (nil once retired).
type KeyVersion struct {
	Version int    `bun:"version"`
	Wrapped []byte `bun:"wrapped"`
}

// KeyVersions lists db's key versions, the retired ones too, in order.
func KeyVersions(ctx context.Context, db bun.IDB) ([]KeyVersion, error) {
	var vs []KeyVersion
	if err := db.NewRaw("select version, wrapped from data_key_versions order by version").Scan(ctx, &vs); err != nil {
		return nil, fmt.Errorf("merchant: reading the data key versions: %w", err)
	}
	return vs, nil
}

// NewVersion makes key version v: a random key wrapped under s's data key,
// recorded nowhere yet.
func (s *Sealer) NewVersion(v int) (KeyVersion, error) {
	if v < 1 || v > 65535 {
		return KeyVersion{}, fmt.Errorf("merchant: no key version %d (1 to 65535)", v)
	}
	key := make([]byte, DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return KeyVersion{}, err
	}
	defer clear(key)
	return KeyVersion{Version: v, Wrapped: s.wrap(uint16(v), key)}, nil //nolint:gosec // checked above
}

// ErrOtherVersion is a key version already in a database with another key.
var ErrOtherVersion = errors.New("merchant: the database has this key version with another key")

// AddVersion records kv in db, in one transaction, and seals under it from
// then on when it is the newest. It must unwrap under s's data key. It
// reports whether it added it: a version already there with the same
// wrapped key (or retired there) is left as it is.
func (s *Sealer) AddVersion(ctx context.Context, db *bun.DB, kv KeyVersion) (bool, error) {
	key, err := open(s.master, kv.Wrapped, wrapContext(uint16(kv.Version))) //nolint:gosec // 1..65535: NewVersion's or the table's
	if err != nil {
		return false, &DataKeyError{Expected: s.fp, Found: s.fp, Reason: fmt.Sprintf("key version %d does not unwrap under it", kv.Version)}
	}
	defer clear(key)
	added, retired := false, false
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// As Rotate: a rotation of this database alone waits its turn.
		if _, err := tx.NewRaw("lock table data_key_versions in share row exclusive mode").Exec(ctx); err != nil {
			return err
		}
		var have KeyVersion
		err := tx.NewRaw("select version, wrapped from data_key_versions where version = ?", kv.Version).Scan(ctx, &have)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case have.Wrapped == nil:
			retired = true // retired since: nothing seals under it any more
			return nil
		case bytes.Equal(have.Wrapped, kv.Wrapped):
			return nil // added before: a rotation resumed
		default:
			return fmt.Errorf("%w (version %d)", ErrOtherVersion, kv.Version)
		}
		_, err = tx.NewRaw("insert into data_key_versions (version, wrapped) values (?, ?)", kv.Version, kv.Wrapped).Exec(ctx)
		added = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("merchant: adding data key version %d: %w", kv.Version, err)
	}
	if retired {
		return false, nil
	}
	return added, s.addVersion(uint16(kv.Version), key, true) //nolint:gosec // as above
}
