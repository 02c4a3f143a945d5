package pgha_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
)

func TestFormationDataNodes(t *testing.T) {
	for _, tt := range []struct {
		opts pgha.FormationOptions
		want int // 0: refused
	}{
		{pgha.FormationOptions{}, 2},
		{pgha.FormationOptions{DataNodes: 3}, 3},
		{pgha.FormationOptions{Ports: []int{1, 2, 3}}, 2},
		{pgha.FormationOptions{Ports: []int{1, 2, 3, 4}}, 3},
		{pgha.FormationOptions{Ports: []int{1, 2, 3, 4}, DataNodes: 2}, 0},
		{pgha.FormationOptions{Ports: []int{1, 2}}, 0},
		{pgha.FormationOptions{DataNodes: 4}, 0},
	} {
		got, err := pgha.DataNodesForTest(tt.opts)
		if tt.want == 0 && err == nil || tt.want != 0 && (err != nil || got != tt.want) {
			t.Errorf("%+v: %d, %v; want %d", tt.opts, got, err, tt.want)
		}
	}
}

// A formation of three data nodes (issue 31, point 3): number_sync_standbys
// is 1, the primary waits for ANY 1 of its two standbys, and when one
// standby is killed every write still commits on the primary and the
// other standby — the primary never goes wait_primary (one copy), as it
// does with two nodes. Every server takes passwords only
// (requirePasswords).
func TestFormationThreeNodes(t *testing.T) {
	if os.Getenv(FormationEnv) == "" {
		t.Skipf("set %s=1 (make test-ha) to run the pg_auto_failover formation", FormationEnv)
	}
	pghatest.NeedTool(t, pgha.FindPgAutoctl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := pghatest.Dir(t)
	created := time.Now()
	f, err := pgha.StartFormation(ctx, pgha.FormationOptions{Dir: filepath.Join(dir, "ha"), DataNodes: 3, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	t.Logf("three-node formation created in %s", time.Since(created).Round(time.Millisecond))
	if n, err := f.SyncStandbys(ctx); err != nil || n != 1 {
		t.Fatalf("number_sync_standbys = %d, %v; want 1", n, err)
	}
	requirePasswords(ctx, t, f)
	if hosts := strings.Count(f.URL("gateway"), "127.0.0.1:"); hosts != 3 {
		t.Errorf("the URL lists %d nodes: %s", hosts, f.URL("gateway"))
	}
	st, err := f.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := st.Primary()
	if !ok {
		t.Fatalf("no primary: %v", st)
	}
	var standby *pgha.Keeper
	for _, n := range f.Nodes {
		if n.Name != p.Name {
			if err := f.WaitState(ctx, n.Name, "secondary"); err != nil {
				t.Fatal(err)
			}
			standby = n
		}
	}
	primary, err := sql.Open("pgx", f.NodeURL(f.Node(p.Name), "gateway"))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	var names string
	if err := primary.QueryRowContext(ctx, "show synchronous_standby_names").Scan(&names); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(names, "ANY 1 (") || strings.Count(names, ",") != 1 {
		t.Errorf("synchronous_standby_names = %q, want ANY 1 of the two standbys", names)
	}

	f.Kill(standby)
	killed := time.Now()
	if _, err := primary.ExecContext(ctx, "create table acks (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	// Writes for 15 s, past the monitor's detection (~3 s tuned): each
	// commits (on the other standby too), and the primary stays primary.
	for i := 1; time.Since(killed) < 15*time.Second; i++ {
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := primary.ExecContext(wctx, "insert into acks values ($1)", i)
		wcancel()
		if err != nil {
			t.Fatalf("write %d, %s after the standby's kill: %v", i, time.Since(killed).Round(time.Millisecond), err)
		}
		if st, err := f.State(ctx); err == nil {
			for _, n := range st {
				if n.Reported == "wait_primary" || n.Assigned == "wait_primary" {
					t.Fatalf("%s went wait_primary (one copy) %s after one of three nodes was lost: %v", n.Name, time.Since(killed).Round(time.Millisecond), st)
				}
			}
		}
		time.Sleep(200 * time.Millisecond) // pacing the writes, not synchronisation
	}
	var sync int
	if err := primary.QueryRowContext(ctx, "select count(*) from pg_stat_replication where sync_state in ('sync', 'quorum')").Scan(&sync); err != nil || sync < 1 {
		t.Errorf("synchronous standbys replicating after the kill: %d, %v; want the other one", sync, err)
	}
}
