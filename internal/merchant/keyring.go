package merchant

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// The data key bound to its database (issue 31, point 2; docs/security.md,
// "The data key"). A process that opens sealed values (serve, and every
// command that builds the domains) calls OpenKeyring with its data key
// before anything else: the database records the key's fingerprint
// (data_key_binding) at the first start, and a later start with another key,
// or with none where the database has one, is refused instead of running
// with a key that opens nothing (a new key made silently, as before, lost
// callbacks, console TOTP and the sealed card numbers without a word).

// DataKeyError is a data key refused at start. cmd/gateway exits 2 on it.
type DataKeyError struct {
	Expected string // the fingerprint the database records; "" when unbound
	Found    string // this process's key's; "" when it has none
	Source   string // where this process's key came from, or would have
	Reason   string // set when the fingerprints alone do not say it
}

func (e *DataKeyError) Error() string {
	found := e.Found
	if found == "" {
		found = "none (no key in " + e.Source + ")"
	} else if e.Source != "" {
		found += " (from " + e.Source + ")"
	}
	msg := fmt.Sprintf("data key refused: the database expects data key fingerprint %s, found %s", e.Expected, found)
	if e.Expected == "" {
		msg = fmt.Sprintf("data key refused: key fingerprint %s", found)
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + "; start with the database's own key (GATEWAY_DATA_KEY or $GATEWAY_DATA_DIR/data.key, kept beside the backups: docs/operations.md)"
}

// BoundFingerprint is the fingerprint the database records, "" when no
// start has bound it yet.
func BoundFingerprint(ctx context.Context, db bun.IDB) (string, error) {
	var fp string
	err := db.NewRaw("select fingerprint from data_key_binding").Scan(ctx, &fp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return fp, err
}

// OpenKeyring checks key against the database's binding, binding the
// database to it when it has none, and returns its sealer with the key
// versions of data_key_versions loaded: Seal uses the newest. source names
// where the key came from, for the refusal's message.
func OpenKeyring(ctx context.Context, db *bun.DB, key []byte, source string) (*Sealer, error) {
	s, err := NewSealer(key)
	if err != nil {
		return nil, err
	}
	bound, err := BoundFingerprint(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("merchant: reading the data key binding: %w", err)
	}
	if bound == "" {
		// A database used before the binding existed: the key must open
		// what it sealed, or it is not the database's key.
		if err := s.opensExisting(ctx, db); err != nil {
			return nil, &DataKeyError{Found: s.fp, Source: source, Reason: err.Error()}
		}
		if _, err := db.NewRaw("insert into data_key_binding (fingerprint) values (?) on conflict do nothing", s.fp).Exec(ctx); err != nil {
			return nil, fmt.Errorf("merchant: binding the data key: %w", err)
		}
		// Another process may have bound it first, with its own key.
		if bound, err = BoundFingerprint(ctx, db); err != nil {
			return nil, err
		}
	}
	if bound != s.fp {
		return nil, &DataKeyError{Expected: bound, Found: s.fp, Source: source}
	}
	s.load = func(v uint16) ([]byte, error) {
		lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return s.unwrapVersion(lctx, db, v)
	}
	if err := s.Refresh(ctx, db); err != nil {
		return nil, err
	}
	return s, nil
}

// opensExisting checks that the sealer opens a merchant's sealed signing
// key, when there is one: the proof that an unbound database is this key's.
func (s *Sealer) opensExisting(ctx context.Context, db bun.IDB) error {
	var shopNo string
	var sealed []byte
	err := db.NewRaw("select shop_no, private_key_sealed from merchants order by id limit 1").Scan(ctx, &shopNo, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := s.OpenSigningKey(sealed, shopNo); err != nil {
		return fmt.Errorf("it does not open the sealed signing key of %s, so it is not this database's key", shopNo)
	}
	return nil
}

// wrapContext binds a wrapped key version to its number.
func wrapContext(v uint16) string { return "data-key-version:" + strconv.Itoa(int(v)) }

// Refresh loads the key versions the database has and this sealer lacks,
// and seals under the newest from then on (a rotation made by another
// process).
func (s *Sealer) Refresh(ctx context.Context, db bun.IDB) error {
	var rows []struct {
		Version int    `bun:"version"`
		Wrapped []byte `bun:"wrapped"`
	}
	if err := db.NewRaw("select version, wrapped from data_key_versions where wrapped is not null order by version").Scan(ctx, &rows); err != nil {
		return fmt.Errorf("merchant: reading the data key versions: %w", err)
	}
	for _, r := range rows {
		key, err := open(s.master, r.Wrapped, wrapContext(uint16(r.Version))) //nolint:gosec // 1..65535 by the table
		if err != nil {
			return &DataKeyError{Expected: s.fp, Found: s.fp, Reason: fmt.Sprintf("key version %d does not unwrap under it", r.Version)}
		}
		if err := s.addVersion(uint16(r.Version), key, true); err != nil { //nolint:gosec // as above
			return err
		}
	}
	return nil
}

func (s *Sealer) unwrapVersion(ctx context.Context, db bun.IDB, v uint16) ([]byte, error) {
	var wrapped []byte
	if err := db.NewRaw("select wrapped from data_key_versions where version = ? and wrapped is not null", int(v)).Scan(ctx, &wrapped); err != nil {
		return nil, fmt.Errorf("merchant: data key version %d: %w", v, err)
	}
	return open(s.master, wrapped, wrapContext(v))
}

// Rotate adds a key version, wrapped under the data key, and seals under
// it from now on; the re-seal (Reseal, run by serve in the background and
// by `gateway datakey reseal`) then moves every sealed value to it.
func (s *Sealer) Rotate(ctx context.Context, db *bun.DB) (uint16, error) {
	key := make([]byte, DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return 0, err
	}
	var v int
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Two rotations at once take turns: each gets its own number.
		if _, err := tx.NewRaw("lock table data_key_versions in share row exclusive mode").Exec(ctx); err != nil {
			return err
		}
		if err := tx.NewRaw("select coalesce(max(version), 0) + 1 from data_key_versions").Scan(ctx, &v); err != nil {
			return err
		}
		if v > 65535 {
			return errors.New("no key version left (65535 used)")
		}
		_, err := tx.NewRaw("insert into data_key_versions (version, wrapped) values (?, ?)", v, s.wrap(uint16(v), key)).Exec(ctx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("merchant: adding a data key version: %w", err)
	}
	return uint16(v), s.addVersion(uint16(v), key, true)
}

// wrap seals key version v's key under the data key.
func (s *Sealer) wrap(v uint16, key []byte) []byte {
	nonce := make([]byte, s.master.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return s.master.Seal(nonce, nonce, key, []byte(wrapContext(v)))
}
