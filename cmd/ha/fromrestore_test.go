package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/internal/pgha/pghatest"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// haRun is one `ha run` of a test, in a goroutine: its output, its end,
// and what stops it (and waits for it), also at the test's end.
type haRun struct {
	out  lockedBuffer
	done chan struct{}
	err  error
	stop func()
}

func startHARun(ctx context.Context, t *testing.T, args ...string) *haRun {
	rctx, cancel := context.WithCancel(ctx)
	r := &haRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = run(rctx, append([]string{"run"}, args...), &r.out, &r.out)
	}()
	r.stop = func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(5 * time.Minute):
			t.Errorf("ha run %v did not stop", args)
		}
	}
	t.Cleanup(func() {
		r.stop()
		t.Logf("ha run %v's output:\n%s", args, r.out.String())
	})
	waitUntil(ctx, t, r.done, "the gateway listening", func() bool { return strings.Contains(r.out.String(), "listening on") })
	return r
}

// journalRow is what identifies an entry of the journal and its place in
// the merchant's hash chain.
type journalRow struct {
	Merchant, Seq int64
	Kind, Hash    string
}

func journal(ctx context.Context, t *testing.T, url string) []journalRow {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "select merchant_id, merchant_seq, kind, encode(hash, 'hex') from entries order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var j []journalRow
	for rows.Next() {
		var r journalRow
		if err := rows.Scan(&r.Merchant, &r.Seq, &r.Kind, &r.Hash); err != nil {
			t.Fatal(err)
		}
		j = append(j, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return j
}

func portsFlag(t *testing.T) string {
	t.Helper()
	ports, err := pgha.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d,%d,%d", ports[0], ports[1], ports[2])
}

// From a restore back to an HA formation (issue 31, point 4): a formation
// with deposits is backed up, restored to a moment, and `ha run
// -from-restore` makes a new formation of the restore: its journal is
// exactly the restored one, it takes writes, its own repository archives
// them, and when its primary's PostgreSQL is killed the standby (cloned
// from the restored node) takes over and the next write is acknowledged.
// A -dir that holds a formation and a directory that is not a verified
// restore are refused first.
func TestFormationFromRestore(t *testing.T) {
	root, bin := formationTest(t)
	oldDir, oldGW := filepath.Join(root, "ha"), filepath.Join(root, "gw")
	newDir, newGW := filepath.Join(root, "ha2"), filepath.Join(root, "gw2")
	into := filepath.Join(root, "restored")
	gatewayTestEnv(t, oldGW)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	// The old formation: two data nodes (the machine is shared), its
	// scheduled full backup, deposits, the moment, one deposit after it.
	old := startHARun(ctx, t, "-dir", oldDir, "-gateway", bin, "-nodes", "2", "-ports", portsFlag(t))
	waitUntil(ctx, t, old.done, "the scheduled full backup", func() bool {
		return strings.Contains(old.out.String(), "ha: scheduled full backup done")
	})
	oldF, err := pgha.OpenFormation(oldDir)
	if err != nil {
		t.Fatal(err)
	}
	gateway := func(url, gwDir string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+url, "DATABASE_ALLOW_SUPERUSER=1", "GATEWAY_DATA_DIR="+gwDir)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	must := func(out string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("gateway: %v\n%s", err, out)
		}
		return out
	}
	var shop struct {
		ShopNo string `json:"shopNo"`
	}
	if err := json.Unmarshal([]byte(must(gateway(oldF.URL("gateway"), oldGW, "merchant", "create", "--name", "Restored Shop", "--currencies", "USD"))), &shop); err != nil {
		t.Fatal(err)
	}
	// The reference is the idempotency key too: a deposit retried after
	// an outcome-unknown commit deposits once.
	deposit := func(url, gwDir, ref string) (string, error) {
		return gateway(url, gwDir, "merchant", "deposit", "--shop-no", shop.ShopNo, "--currency", "USD", "--amount", "10.00",
			"--bank-reference", ref, "--idempotency-key", ref)
	}
	for i := 1; i <= 3; i++ {
		must(deposit(oldF.URL("gateway"), oldGW, "before-"+strconv.Itoa(i)))
	}
	restored := journal(ctx, t, oldF.URL("gateway"))
	odb, err := sql.Open("pgx", oldF.URL("gateway"))
	if err != nil {
		t.Fatal(err)
	}
	var target time.Time
	err = odb.QueryRowContext(ctx, "select clock_timestamp()").Scan(&target)
	odb.Close()
	if err != nil {
		t.Fatal(err)
	}
	must(deposit(oldF.URL("gateway"), oldGW, "after-the-moment"))
	var rout lockedBuffer
	if err := run(ctx, []string{"restore", "-dir", oldDir, "-target", target.UTC().Format("2006-01-02 15:04:05.999999-07"),
		"-key", filepath.Join(oldGW, "data.key"), "-into", into, "-gateway", bin}, &rout, &rout); err != nil {
		t.Fatalf("restore: %v\n%s", err, rout.String())
	}
	old.stop() // two formations at once are too much for the machine
	oldRepo, err := pgha.OpenRepo(filepath.Join(oldF.Dir(), "backup"))
	if err != nil {
		t.Fatal(err)
	}
	oldList, err := oldRepo.Backups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldBackups := len(oldList)

	// The refusals, before anything is made. An unfinished restore: one
	// with its cluster and key but without the mark of audit verify's pass.
	unfinished := filepath.Join(root, "unfinished")
	if out, err := exec.Command("cp", "-a", into, unfinished).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := os.Remove(filepath.Join(unfinished, restoreMarker)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, from, want string
	}{
		{"a -dir holding a formation", oldDir, into, "already holds a formation"},
		{"a directory that is not a restore", filepath.Join(root, "ha3"), root, "is not a finished, verified restore"},
		{"a restore without its mark", filepath.Join(root, "ha4"), unfinished, "is not a finished, verified restore"},
	} {
		var out lockedBuffer
		err := run(ctx, []string{"run", "-dir", tc.dir, "-from-restore", tc.from, "-gateway", bin, "-nodes", "2"}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q\n%s", tc.name, err, tc.want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(root, "ha3")); err == nil {
		t.Errorf("a refused -from-restore made its -dir")
	}

	// The new formation from the restore.
	t.Setenv("GATEWAY_DATA_DIR", newGW)
	started := time.Now()
	nf := startHARun(ctx, t, "-dir", newDir, "-from-restore", into, "-gateway", bin, "-nodes", "2", "-ports", portsFlag(t))
	t.Logf("the formation from the restore served in %s", time.Since(started).Round(time.Millisecond))
	if !strings.Contains(nf.out.String(), "ha: gateway audit verify passed on the new primary") {
		t.Errorf("no audit verify of the new primary in ha run's output")
	}
	f, err := pgha.OpenFormation(newDir)
	if err != nil {
		t.Fatal(err)
	}
	url := f.URL("gateway")
	if got := journal(ctx, t, url); !reflect.DeepEqual(got, restored) {
		t.Fatalf("the new formation's journal is not the restored one:\n got %v\nwant %v", got, restored)
	}
	if k1, k2 := must2(os.ReadFile(filepath.Join(newGW, "data.key"))), must2(os.ReadFile(filepath.Join(oldGW, "data.key"))); k1 != k2 {
		t.Errorf("the new gateway's data key is not the restored database's")
	}
	must(deposit(url, newGW, "new-1"))
	// Its own repository: the WAL goes to the new formation's, never
	// into the old one's.
	ndb, err := sql.Open("pgx", f.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer ndb.Close()
	var archive string
	if err := ndb.QueryRowContext(ctx, "show archive_command").Scan(&archive); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(archive, f.Dir()+"/backup/") || strings.Contains(archive, oldF.Dir()+"/") {
		t.Errorf("the new primary archives with %q, want the new formation's repository (%s)", archive, f.Dir())
	}
	if err := pgha.SwitchAndArchive(ctx, f.URL("postgres")); err != nil {
		t.Errorf("the new formation's WAL is not archived into its repository: %v", err)
	}
	// Its first backup (the schedule's, at once) goes there too, and the
	// old repository holds what it held.
	waitUntil(ctx, t, nf.done, "the new formation's scheduled full backup", func() bool {
		return strings.Contains(nf.out.String(), "ha: scheduled full backup done")
	})
	for _, r := range []struct {
		dir  string
		want int
	}{{f.Dir(), 1}, {oldF.Dir(), oldBackups}} {
		repo, err := pgha.OpenRepo(filepath.Join(r.dir, "backup"))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := repo.Backups(ctx); err != nil || len(b) != r.want {
			t.Errorf("the repository of %s holds %d backups (%v), want %d", r.dir, len(b), err, r.want)
		}
	}

	// The primary's PostgreSQL killed: the standby, cloned from the
	// restored node, takes over, and the next write is acknowledged.
	st, err := f.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := st.Primary()
	var standby string
	for _, n := range f.Nodes {
		if n.Name != p.Name {
			standby = n.Name
		}
	}
	pgcluster.KillServer(f.Node(p.Name).PGData)
	if err := f.WaitState(ctx, standby, "primary", "wait_primary"); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, nf.done, "a deposit acknowledged after the failover", func() bool {
		_, err := deposit(url, newGW, "new-2")
		return err == nil
	})
	got := journal(ctx, t, url)
	if len(got) != len(restored)+2 || !reflect.DeepEqual(got[:len(restored)], restored) {
		t.Fatalf("after the failover the journal is not the restored one plus the two new deposits:\n got %v\nrestored %v", got, restored)
	}
	for _, r := range got[len(restored):] {
		if r.Kind != "DEPOSIT" {
			t.Errorf("a new entry is %s, want DEPOSIT", r.Kind)
		}
	}
	must(gateway(url, newGW, "audit", "verify"))
}

func must2(b []byte, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// A -from-restore that fails after it began making the formation (here the
// restored cluster is not one PostgreSQL can start: the copy's node never
// comes up) leaves no -dir behind, so the same command can run again; the
// restore is untouched.
func TestRunFromRestoreRemovesAnUnfinishedFormation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a pg_auto_failover monitor")
	}
	pghatest.NeedTool(t, pgha.FindPgAutoctl)
	root := pghatest.Dir(t)
	restored, dir := filepath.Join(root, "restored"), filepath.Join(root, "ha-new")
	marker := `{"target":"2026-11-25T10:00:00Z","formation":"/var/ha","verified":"2026-11-25T11:00:00Z"}`
	writeFiles(t, restored, map[string]string{restoreMarker: marker, "data.key": keyA, "pg/data/PG_VERSION": "15\n"})
	t.Setenv("GATEWAY_DATA_DIR", filepath.Join(root, "gw"))
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	var out lockedBuffer
	err := run(ctx, []string{"run", "-dir", dir, "-from-restore", restored, "-nodes", "2", "-ports", portsFlag(t)}, &out, &out)
	if err == nil {
		t.Fatalf("ha run -from-restore of a cluster that cannot start succeeded\n%s", out.String())
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Errorf("the failed run (%v) left %s behind; the retry would be refused\n%s", err, dir, out.String())
	}
	if b, rerr := os.ReadFile(filepath.Join(restored, "pg", "data", "PG_VERSION")); rerr != nil || string(b) != "15\n" {
		t.Errorf("the restore was touched: %q, %v", b, rerr)
	}
}
