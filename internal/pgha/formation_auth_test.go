package pgha_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/internal/pgha"
)

// requirePasswords checks that every server of a running formation, the
// monitor and each node, refuses a connection without a password — as
// each of the formation's roles and the gateway's, over TLS — and a plain
// TCP connection even with the password (hostssl only), and accepts the
// formation's own URL (its password file). Issue 31, point 4: pg_autoctl's
// trust let any local user in as any role.
func requirePasswords(ctx context.Context, t *testing.T, f *pgha.Formation) {
	t.Helper()
	if f.PassFile() == "" {
		t.Fatal("the formation has no password file: its servers take no passwords")
	}
	servers := append([]*pgha.Keeper{f.Monitor}, f.Nodes...)
	for _, k := range servers {
		db := "postgres"
		if k == f.Monitor {
			db = "pg_auto_failover"
		}
		own := f.NodeURL(k, db)
		u, err := url.Parse(own)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			edit func(u *url.URL, q url.Values)
		}{
			{"postgres without a password", func(_ *url.URL, q url.Values) { q.Set("passfile", "/nonexistent") }},
			{"autoctl_node without a password", func(u *url.URL, q url.Values) {
				u.User = url.User("autoctl_node")
				q.Set("passfile", "/nonexistent")
			}},
			{"pgautofailover_replicator without a password", func(u *url.URL, q url.Values) {
				u.User = url.User("pgautofailover_replicator")
				q.Set("passfile", "/nonexistent")
			}},
			{"gateway_app without a password", func(u *url.URL, q url.Values) {
				u.User = url.User("gateway_app")
				q.Set("passfile", "/nonexistent")
			}},
			{"postgres with its password, without TLS", func(_ *url.URL, q url.Values) {
				q.Set("sslmode", "disable")
				q.Del("sslrootcert")
			}},
		} {
			c := *u
			q := c.Query()
			tt.edit(&c, q)
			c.RawQuery = q.Encode()
			err := connect(ctx, c.String())
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || !strings.HasPrefix(pgErr.Code, "28") {
				t.Errorf("%s %s: %v; want refused by the server's authentication (SQLSTATE 28…)", k.Name, tt.name, err)
			}
		}
		if err := connect(ctx, own); err != nil {
			t.Errorf("%s with the formation's URL: %v", k.Name, err)
		}
	}
}

func connect(ctx context.Context, u string) error {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return db.PingContext(cctx)
}
