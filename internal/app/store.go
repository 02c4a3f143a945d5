package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// EmbeddedDBName is the database of the embedded cluster.
const EmbeddedDBName = "gateway"

// EmbeddedDir is where the embedded cluster of a configuration lives.
func EmbeddedDir(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "pg") }

// Store is an open database, plus what it takes to close it.
type Store struct {
	DB      *bun.DB
	URL     string
	cluster *pgcluster.Cluster // nil with DATABASE_URL
}

// Close closes the database and stops the embedded cluster if this store
// started it.
func (s *Store) Close() {
	if s.DB != nil {
		s.DB.Close()
	}
	if s.cluster != nil {
		_ = s.cluster.Stop()
	}
}

// OpenStore connects to DATABASE_URL or, without it, to the embedded
// cluster in $GATEWAY_DATA_DIR/pg, starting it when it is not running (it
// is then stopped by Close); the cluster's own output goes to logOut. It
// applies pending migrations.
func OpenStore(ctx context.Context, cfg *config.Config, logOut io.Writer, opts database.DBOptions) (*Store, error) {
	s := &Store{URL: cfg.DatabaseURL}
	if s.URL == "" {
		c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: EmbeddedDir(cfg), Durable: true, Log: logOut})
		if err != nil {
			return nil, err
		}
		s.cluster = c
		if err := c.CreateDatabase(ctx, EmbeddedDBName); err != nil {
			s.Close()
			return nil, err
		}
		s.URL = c.URL(EmbeddedDBName)
	}
	db, err := database.OpenDB(ctx, s.URL, opts)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.DB = db
	if err := database.Migrate(ctx, db); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// LoadSealer returns the data key's sealer: GATEWAY_DATA_KEY or the key
// file in the data directory, generated on first use with mode 0600.
// Losing that file loses every sealed secret: back it up with the database
// (docs/operations.md).
func LoadSealer(cfg *config.Config) (*merchant.Sealer, error) {
	if cfg.DataKey != nil {
		return merchant.NewSealer(cfg.DataKey)
	}
	path := filepath.Join(cfg.DataDir, "data.key")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key := make([]byte, merchant.DataKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadSealer(cfg) // another process made it first
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		return merchant.NewSealer(key)
	}
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a hex key", path)
	}
	return merchant.NewSealer(key)
}
