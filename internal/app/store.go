package app

import (
	"context"
	"io"
	"path/filepath"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
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
