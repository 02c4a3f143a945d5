package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/formancehq/go-libs/v3/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	schema "github.com/paygate/gateway/sql"
)

// DBOptions bound the connection pool and every statement.
type DBOptions struct {
	ConnsMax         int           // open connections; default 32
	StatementTimeout time.Duration // server-side limit per statement; default 30s
	LockTimeout      time.Duration // server-side limit on a lock wait; default 10s
	// ConnectTimeout bounds the connection to each host of the URL (a
	// multi-host URL tries them in turn). Default: the URL's
	// connect_timeout, else 2s, so that an outage fails fast.
	ConnectTimeout time.Duration
	// TCP are the keepalives and TCP_USER_TIMEOUT of every connection
	// (dial.go); zero fields take their defaults.
	TCP TCPOptions
	// Watch, when set, probes the URL's hosts, cuts the connections to a
	// silent or read-only one and orders the hosts of each new connection
	// (dbwatch.go). OpenDB starts it; the caller closes it after the
	// database.
	Watch *Watch
}

func (o *DBOptions) defaults() {
	if o.ConnsMax == 0 {
		o.ConnsMax = 32
	}
	if o.StatementTimeout == 0 {
		o.StatementTimeout = 30 * time.Second
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = 10 * time.Second
	}
	if o.ConnectTimeout == 0 {
		// database/sql tries a failing dial more than once, so a request
		// can wait a multiple of this while PostgreSQL restarts: keep it
		// short, so that an outage is answered 503 in seconds.
		o.ConnectTimeout = 2 * time.Second
	}
	o.TCP.defaults()
}

// openTimeout bounds the start-up connection check of OpenDB.
const openTimeout = 15 * time.Second

// connLifetimeMax bounds how long a pooled connection is reused (OpenDB).
const connLifetimeMax = 30 * time.Minute

// OpenDB opens a bun database on a PostgreSQL URL through pgx.
//
// bun writes its arguments into the query text itself, with PostgreSQL's
// quoting rules, so every query is sent with the simple protocol: preparing
// each distinct text would cost a round trip and fill pgx's statement cache.
func OpenDB(ctx context.Context, databaseURL string, o DBOptions) (*bun.DB, error) {
	db, err := OpenDBLazy(databaseURL, o)
	if err != nil {
		return nil, err
	}
	// The first connection may take a few tries on a busy machine: each
	// dial is short, the whole start-up check is not.
	pingCtx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	for {
		err := db.PingContext(pingCtx)
		if err == nil {
			return db, nil
		}
		select {
		case <-pingCtx.Done():
			db.Close()
			return nil, fmt.Errorf("ledger: connecting to PostgreSQL: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// OpenDBLazy is OpenDB without the start-up check: the first connection is
// made by the first query. For DATABASE_READ_URL, whose standby may be down
// when the gateway starts (its reads then go to the primary).
func OpenDBLazy(databaseURL string, o DBOptions) (*bun.DB, error) {
	cfg, o, err := ConnConfig(databaseURL, o)
	if err != nil {
		return nil, err
	}
	conns := newConnSet()
	cfg.DialFunc = dialer(o.TCP, conns)
	var opts []stdlib.OptionOpenDB
	if o.Watch != nil {
		o.Watch.start(cfg, o.TCP, conns)
		opts = append(opts, stdlib.OptionBeforeConnect(o.Watch.order))
	}
	sqldb := stdlib.OpenDB(*cfg, opts...)
	sqldb.SetMaxOpenConns(o.ConnsMax)
	sqldb.SetMaxIdleConns(o.ConnsMax)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	// A connection keeps its prepared statements' plans, and PostgreSQL's
	// own (foreign-key checks, PL/pgSQL), until an ANALYZE invalidates
	// them: renewing connections bounds how long a plan made against
	// different data can last, and the memory a backend's caches grow to.
	sqldb.SetConnMaxLifetime(connLifetimeMax)
	return bun.NewDB(sqldb, pgdialect.New()), nil
}

// ConnConfig is the pgx configuration of OpenDB: the URL's, with the
// session settings and limits of o (its zero fields given their defaults,
// which it returns).
func ConnConfig(databaseURL string, o DBOptions) (*pgx.ConnConfig, DBOptions, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, o, fmt.Errorf("ledger: DATABASE_URL: %w", err)
	}
	if o.ConnectTimeout == 0 && cfg.ConnectTimeout > 0 {
		o.ConnectTimeout = cfg.ConnectTimeout // the URL's connect_timeout
	}
	o.defaults()
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// pgx applies it to each host of a multi-host URL in turn: a primary
	// that is gone costs this much before the next host is tried.
	cfg.ConnectTimeout = o.ConnectTimeout
	cfg.OnPgError = dropConnOnError
	// Keepalives and TCP_USER_TIMEOUT on every connection, whoever opens
	// it (OpenDBLazy adds the record of the pool's connections).
	cfg.DialFunc = dialer(o.TCP, nil)
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "gateway"
	cfg.RuntimeParams["statement_timeout"] = fmt.Sprint(o.StatementTimeout.Milliseconds())
	cfg.RuntimeParams["lock_timeout"] = fmt.Sprint(o.LockTimeout.Milliseconds())
	cfg.RuntimeParams["timezone"] = "UTC"
	// The only prepared statements are the package's own fixed texts
	// (ledger/pipeline.go), written so that their generic plan is index
	// probes: plan them once per connection. PostgreSQL would otherwise
	// plan them anew at every execution, because a custom plan for a
	// one-element array always looks cheaper than the generic one, and
	// planning was a third of its time (docs/performance.md). bun's
	// queries use the simple protocol and are not affected.
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	return cfg, o, nil
}

// SQLStateReadOnly is read_only_sql_transaction: a write on a server that
// takes none (a standby, or a primary being demoted).
const SQLStateReadOnly = "25006"

// dropConnOnError is pgx's OnPgError: false closes the connection, and
// database/sql then discards it instead of pooling it again. pgx closes on
// FATAL (the server ended the session); we also close after 25006, because a
// connection to a server that has stopped taking writes never takes one
// again, and each reuse would fail another request. A fresh connection
// through a multi-host URL with target_session_attrs=read-write skips that
// server and finds the new primary (docs/ha.md).
func dropConnOnError(_ *pgconn.PgConn, pe *pgconn.PgError) bool {
	return !strings.EqualFold(pe.Severity, "FATAL") && pe.Code != SQLStateReadOnly
}

// Migrate applies the migrations of sql/ that the database does not have
// yet. Each one runs in its own transaction together with the record that it
// ran (go-libs migrations, under an advisory lock), so a crash leaves either
// all of a migration or none of it, and two processes never run one twice.
//
// A database that has every migration already is left untouched, with
// nothing but reads: the gateway's serving role (gateway_app, docs/security.md)
// may open it, but may not run the migrator's own DDL. After migrations ran,
// gateway_app is granted the rows of every table (sql/0026).
func Migrate(ctx context.Context, db *bun.DB) error {
	registered := registeredMigrations()
	upToDate, err := migrations.NewMigrator(db, migrations.WithTableName("schema_migrations")).
		RegisterMigrations(registered...).IsUpToDate(ctx)
	if err == nil && upToDate {
		return nil
	}
	for {
		err := db.RunInTx(ctx, &sql.TxOptions{}, func(ctx context.Context, tx bun.Tx) error {
			return migrations.NewMigrator(tx, migrations.WithTableName("schema_migrations")).
				RegisterMigrations(registered...).
				UpByOne(ctx)
		})
		if errors.Is(err, migrations.ErrAlreadyUpToDate) {
			return grantApp(ctx, db)
		}
		if err != nil {
			return fmt.Errorf("ledger: migrate: %w%s", err, migrateHint(ctx, db))
		}
	}
}

func registeredMigrations() []migrations.Migration {
	var registered []migrations.Migration
	for _, m := range schema.Migrations() {
		m := m
		registered = append(registered, migrations.Migration{
			Name: m.Name,
			Up: func(ctx context.Context, idb bun.IDB) error {
				// The raw *sql.Tx, not bun: the SQL files are sent as they
				// are written, with no placeholder processing.
				tx, ok := idb.(bun.Tx)
				if !ok {
					return errors.New("ledger: migrations must run in a transaction")
				}
				if _, err := tx.Tx.ExecContext(ctx, m.SQL); err != nil {
					return fmt.Errorf("%s: %w", m.Name, err)
				}
				return nil
			},
		})
	}
	return registered
}
