package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// embeddedDBName is the database of the embedded cluster.
const embeddedDBName = "gateway"

func dataDir(e *env) string {
	if d := e.getenv("GATEWAY_DATA_DIR"); d != "" {
		return d
	}
	return "var"
}

// store is an open database, plus what it takes to close it.
type store struct {
	db      *bun.DB
	url     string
	cluster *pgcluster.Cluster // nil with DATABASE_URL
}

func (s *store) close() {
	if s.db != nil {
		s.db.Close()
	}
	if s.cluster != nil {
		_ = s.cluster.Stop()
	}
}

// openStore connects to DATABASE_URL or, without it, to the embedded cluster
// in $GATEWAY_DATA_DIR/pg, starting it when it is not running (it is then
// stopped by close). It applies pending migrations.
func openStore(ctx context.Context, e *env, opts ledger.DBOptions) (*store, error) {
	s := &store{url: e.getenv("DATABASE_URL")}
	if s.url == "" {
		c, err := pgcluster.Start(ctx, pgcluster.Options{
			Dir: filepath.Join(dataDir(e), "pg"), Durable: true, Log: e.stderr,
		})
		if err != nil {
			return nil, err
		}
		s.cluster = c
		if err := c.CreateDatabase(ctx, embeddedDBName); err != nil {
			s.close()
			return nil, err
		}
		s.url = c.URL(embeddedDBName)
	}
	db, err := ledger.OpenDB(ctx, s.url, opts)
	if err != nil {
		s.close()
		return nil, err
	}
	s.db = db
	if err := ledger.Migrate(ctx, db); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// loadSealer returns the data key's sealer: GATEWAY_DATA_KEY (64 hex digits)
// or the key file in the data directory, generated on first use with mode
// 0600. Losing that file loses every sealed secret: back it up with the
// database (docs/operations.md).
func loadSealer(e *env) (*ledger.Sealer, error) {
	if k := strings.TrimSpace(e.getenv("GATEWAY_DATA_KEY")); k != "" {
		key, err := hex.DecodeString(k)
		if err != nil {
			return nil, errors.New("GATEWAY_DATA_KEY must be 64 hex digits")
		}
		return ledger.NewSealer(key)
	}
	path := filepath.Join(dataDir(e), "data.key")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key := make([]byte, ledger.DataKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dataDir(e), 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, os.ErrExist) {
			return loadSealer(e) // another process made it first
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
		return ledger.NewSealer(key)
	}
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a hex key", path)
	}
	return ledger.NewSealer(key)
}

// openLedger opens the store and a ledger on it, with its domains (their
// default settings: the operator's commands decide nothing they tune).
func openLedger(ctx context.Context, e *env) (*store, *services, error) {
	sealer, err := loadSealer(e)
	if err != nil {
		return nil, nil, err
	}
	s, err := openStore(ctx, e, ledger.DBOptions{ConnsMax: 8})
	if err != nil {
		return nil, nil, err
	}
	l := ledger.New(s.db, ledger.Config{Sealer: sealer, Logger: e.log, Shards: 1})
	return s, newServices(l, domainSettings{}), nil
}
