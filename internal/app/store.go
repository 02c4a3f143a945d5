package app

import (
	"context"
	"errors"
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
	DB  *bun.DB
	URL string
	// AdminURL is for the administrative commands that make roles (`audit
	// role`): the embedded cluster's superuser over the socket, since the
	// gateway's own role may not (docs/security.md, 13); DATABASE_URL's
	// user otherwise.
	AdminURL string
	cluster  *pgcluster.Cluster // nil with DATABASE_URL
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
	if len(cfg.Cells) > 0 {
		// Not the embedded cluster by mistake: with cells, a store is a
		// cell's (config.ForCell).
		return nil, errors.New("GATEWAY_CELLS is set: this command works in one cell; give it --cell (or --shop-no), " +
			"or run it with that cell's DATABASE_URL and GATEWAY_CELLS unset")
	}
	s := &Store{URL: cfg.DatabaseURL, AdminURL: cfg.DatabaseURL}
	if s.URL == "" {
		c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: EmbeddedDir(cfg), Durable: true, Log: logOut})
		if err != nil {
			return nil, err
		}
		s.cluster = c
		s.AdminURL = c.URL(EmbeddedDBName)
		if s.URL, err = embeddedAppURL(ctx, c); err != nil {
			s.Close()
			return nil, err
		}
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

// embeddedAppURL prepares the embedded cluster's database the way
// docs/security.md ("Database roles") asks of any: the roles made by the
// bootstrap, the migrations run by the tables' owner, and the gateway then
// connected as the least-privilege gateway_app with its password.
func embeddedAppURL(ctx context.Context, c *pgcluster.Cluster) (string, error) {
	if err := c.EnsureRoles(ctx); err != nil {
		return "", err
	}
	if err := c.CreateOwnedDatabase(ctx, EmbeddedDBName); err != nil {
		return "", err
	}
	migrateURL, err := c.MigrateURL(ctx, EmbeddedDBName)
	if err != nil {
		return "", err
	}
	owner, err := database.OpenDB(ctx, migrateURL, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return "", err
	}
	defer owner.Close()
	if err := database.Migrate(ctx, owner); err != nil {
		return "", err
	}
	return c.RoleURL(pgcluster.AppRole, EmbeddedDBName)
}
