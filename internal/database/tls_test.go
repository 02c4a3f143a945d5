package database_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/ledger/pgtest"
)

// The gateway reaches a PostgreSQL over TCP with sslmode=verify-full and
// the cluster's CA (docs/security.md, "13. The database"): its own dialer
// (keepalives, TCP_USER_TIMEOUT) and the watch's probes keep the TLS of the
// URL, the server's name is checked against the CA's certificate, and a
// URL that does not ask for TLS is refused by the server.
func TestOpenDBVerifyFull(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := pgtest.StartLoopbackCluster(t)
	u, err := c.TLSURL(pgcluster.AppRole, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	w := database.NewWatch(database.WatchOptions{})
	db, err := database.OpenDB(ctx, u, database.DBOptions{ConnsMax: 2, Watch: w})
	if err != nil {
		t.Fatalf("OpenDB(verify-full): %v", err)
	}
	defer w.Close()
	defer db.Close()
	var ssl bool
	var user string
	if err := db.NewRaw("select ssl, current_user::text from pg_stat_ssl where pid = pg_backend_pid()").Scan(ctx, &ssl, &user); err != nil {
		t.Fatal(err)
	}
	if !ssl || user != pgcluster.AppRole {
		t.Errorf("connection: ssl %v as %s, want TLS as %s", ssl, user, pgcluster.AppRole)
	}

	// The name in the URL must be the certificate's: "localhost" is, an
	// address outside it is not; and a plain connection is refused.
	for _, tt := range []struct {
		name, url string
		ok        bool
	}{
		{"localhost", strings.Replace(u, "127.0.0.1", "localhost", 1), true},
		{"sslmode=disable", strings.Replace(u, "sslmode=verify-full", "sslmode=disable", 1), false},
	} {
		db, err := database.OpenDBLazy(tt.url, database.DBOptions{ConnsMax: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = db.PingContext(ctx)
		db.Close()
		if (err == nil) != tt.ok {
			t.Errorf("%s: ping err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
