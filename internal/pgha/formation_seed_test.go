package pgha_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// The first node of a formation from a restore is a copy of the restored
// cluster without what belongs to the old formation: its gateway settings
// (the old repository's archive_command) and pgBackRest's recovery
// settings (a standby cloned from it would promote itself at the old
// target). A seed with a running server, or none, is refused.
func TestSeedNodeCleansTheCopy(t *testing.T) {
	root := pghatest.Dir(t)
	seed := filepath.Join(root, "restored")
	oldBlock := "\n# The gateway's settings (internal/pgha, docs/ha.md)\narchive_command = 'pgbackrest --config=/old/backup/pgbackrest.conf archive-push %p'\n"
	files := map[string]string{
		"PG_VERSION":           "15\n",
		"postgresql.conf":      "port = 5432\ninclude 'postgresql-auto-failover.conf'\n" + oldBlock,
		"postgresql.auto.conf": "restore_command = 'pgbackrest --config=/old/backup/pgbackrest.conf archive-get %f \"%p\"'\nrecovery_target_time = '2026-11-25 10:00:00+00'\nrecovery_target_action = 'promote'\n",
		"base/1/1234":          "a relation",
	}
	for name, body := range files {
		p := filepath.Join(seed, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(seed, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return pgcluster.Chown(p)
	}); err != nil {
		t.Fatal(err)
	}
	// The formation's directory, as StartFormation prepares it.
	dir, err := pgcluster.PrepareDir(filepath.Join(root, "ha"), nil)
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(dir, "data", "node1")
	if err := pgha.SeedNodeForTest(dir, node, seed); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(node, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("base/1/1234"); got != "a relation" {
		t.Errorf("the copy's relation file holds %q", got)
	}
	if conf := read("postgresql.conf"); strings.Contains(conf, "/old/backup") || !strings.Contains(conf, "include 'postgresql-auto-failover.conf'") {
		t.Errorf("the copy's postgresql.conf keeps the old formation's settings or lost pg_autoctl's include:\n%s", conf)
	}
	if auto := read("postgresql.auto.conf"); strings.Contains(auto, "recovery_target") || strings.Contains(auto, "restore_command") {
		t.Errorf("the copy's postgresql.auto.conf keeps the restore's recovery settings:\n%s", auto)
	}
	if b, err := os.ReadFile(filepath.Join(seed, "postgresql.auto.conf")); err != nil || !strings.Contains(string(b), "recovery_target_time") {
		t.Errorf("the restore itself was changed (%v)", err)
	}

	for _, tc := range []struct {
		name, seed, want string
		prepare          func(t *testing.T, seed string)
	}{
		{"a running server", seed, "a server runs on", func(t *testing.T, seed string) {
			if err := os.WriteFile(filepath.Join(seed, "postmaster.pid"), []byte("1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"no cluster", filepath.Join(root, "empty"), "holds no cluster", func(t *testing.T, seed string) {
			if err := os.MkdirAll(seed, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare(t, tc.seed)
			err := pgha.SeedNodeForTest(dir, filepath.Join(dir, "data", "node9"), tc.seed)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("seeding from %s: %v, want %q", tc.seed, err, tc.want)
			}
		})
	}
}
