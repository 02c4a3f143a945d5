package deploytest

import (
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/internal/config"
)

const threeNodes = deployDir + "/three-nodes"

// layout is deploy/three-nodes read: the monitor's env file and the data
// nodes' by file name.
type layout struct {
	monitor map[string]string
	nodes   map[string]map[string]string
}

func readLayout(t *testing.T) layout {
	t.Helper()
	l := layout{monitor: readEnv(t, threeNodes+"/monitor.env"), nodes: map[string]map[string]string{}}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("node%d.env", i)
		l.nodes[name] = readEnv(t, threeNodes+"/"+name)
	}
	return l
}

// TestThreeNodeLayout checks the invariants of the three-machine layout
// (docs/ha.md, "On three machines"): three data nodes on three machines,
// every one reporting to the one monitor, which keeps one synchronous
// standby of two; the gateways' URL lists every data node and nothing
// else; the backups reach every node; no trust authentication, no
// unverified TLS, and the gateway not the superuser.
func TestThreeNodeLayout(t *testing.T) {
	l := readLayout(t)
	m := l.monitor
	if m["PGAF_ROLE"] != "monitor" {
		t.Fatalf("monitor.env: PGAF_ROLE=%q", m["PGAF_ROLE"])
	}
	if m["PGAF_NUMBER_SYNC_STANDBYS"] != "1" {
		t.Errorf("monitor.env: PGAF_NUMBER_SYNC_STANDBYS=%q, want 1 (a commit on two of the three nodes)", m["PGAF_NUMBER_SYNC_STANDBYS"])
	}
	monitorAddr := m["PGAF_HOSTNAME"] + ":" + m["PGPORT"]

	var nodeAddrs, names []string
	hosts := map[string]bool{m["PGAF_HOSTNAME"]: true}
	for file, n := range l.nodes {
		if n["PGAF_ROLE"] != "postgres" {
			t.Errorf("%s: PGAF_ROLE=%q, want postgres (a data node)", file, n["PGAF_ROLE"])
		}
		if hosts[n["PGAF_HOSTNAME"]] {
			t.Errorf("%s: machine %q already holds another node: one node per machine", file, n["PGAF_HOSTNAME"])
		}
		hosts[n["PGAF_HOSTNAME"]] = true
		names = append(names, n["PGAF_NAME"])
		nodeAddrs = append(nodeAddrs, n["PGAF_HOSTNAME"]+":"+n["PGPORT"])
		mon, err := url.Parse(n["PGAF_MONITOR"])
		if err != nil {
			t.Fatalf("%s: PGAF_MONITOR: %v", file, err)
		}
		if mon.Host != monitorAddr || mon.Query().Get("sslmode") != "verify-full" {
			t.Errorf("%s: PGAF_MONITOR %s, want the monitor %s with sslmode=verify-full", file, n["PGAF_MONITOR"], monitorAddr)
		}
		if n["PGAF_REPLICATION_QUORUM"] != "true" {
			t.Errorf("%s: not in the write quorum: number_sync_standbys=1 needs both standbys in it", file)
		}
		if p, err := strconv.Atoi(n["PGAF_CANDIDATE_PRIORITY"]); err != nil || p <= 0 {
			t.Errorf("%s: PGAF_CANDIDATE_PRIORITY=%q: every node must be promotable", file, n["PGAF_CANDIDATE_PRIORITY"])
		}
	}
	for file, e := range map[string]map[string]string{"monitor.env": m, "node1.env": l.nodes["node1.env"], "node2.env": l.nodes["node2.env"], "node3.env": l.nodes["node3.env"]} {
		if e["PGAF_AUTH"] != "scram-sha-256" || e["PGAF_SSL_MODE"] != "verify-full" {
			t.Errorf("%s: auth %q, TLS %q: want scram-sha-256 and verify-full", file, e["PGAF_AUTH"], e["PGAF_SSL_MODE"])
		}
	}
	if len(names) != 3 || len(slices.Compact(slices.Sorted(slices.Values(names)))) != 3 {
		t.Errorf("node names %v: want three distinct", names)
	}

	// The gateways' URL: exactly the three data nodes, the writable one
	// chosen, the same in the systemd unit's settings.
	gw := readEnv(t, threeNodes+"/gateway.env")
	for _, u := range config.UnknownVariables(environ(gw)) {
		t.Errorf("gateway.env: %s is no setting of the gateway", u.Name)
	}
	if unit := readEnv(t, deployDir+"/systemd/gateway.env"); unit["DATABASE_URL"] != gw["DATABASE_URL"] {
		t.Errorf("deploy/systemd/gateway.env names other database nodes than the layout:\n%s\n%s", unit["DATABASE_URL"], gw["DATABASE_URL"])
	}
	cfg, err := pgconn.ParseConfig(withCA(t, gw["DATABASE_URL"]))
	if err != nil {
		t.Fatalf("gateway.env DATABASE_URL: %v", err)
	}
	listed := []string{fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)}
	for _, f := range cfg.Fallbacks {
		if a := fmt.Sprintf("%s:%d", f.Host, f.Port); !slices.Contains(listed, a) {
			listed = append(listed, a)
		}
	}
	if !sameSet(listed, nodeAddrs) {
		t.Errorf("DATABASE_URL lists %v, the data nodes are %v", listed, nodeAddrs)
	}
	if cfg.User == "postgres" || cfg.User == "" {
		t.Errorf("the gateway connects as %q: a role of its own, never the superuser", cfg.User)
	}
	q := mustQuery(t, gw["DATABASE_URL"])
	if q.Get("target_session_attrs") != "read-write" || q.Get("sslmode") != "verify-full" {
		t.Errorf("DATABASE_URL: target_session_attrs=%q sslmode=%q, want read-write and verify-full", q.Get("target_session_attrs"), q.Get("sslmode"))
	}
	if ct, err := strconv.Atoi(q.Get("connect_timeout")); err != nil || ct < 5 || ct > 10 {
		t.Errorf("DATABASE_URL: connect_timeout=%q, want 5–10 (docs/ha.md, CPU starvation)", q.Get("connect_timeout"))
	}

	// The backups: the repository host reaches every data node.
	var backed []string
	eachLine(t, threeNodes+"/pgbackrest.conf", func(_ int, line string) {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "pg") && strings.HasSuffix(k, "-host") {
			backed = append(backed, v)
		}
	})
	var nodeHosts []string
	for _, n := range l.nodes {
		nodeHosts = append(nodeHosts, n["PGAF_HOSTNAME"])
	}
	if !sameSet(backed, nodeHosts) {
		t.Errorf("pgbackrest.conf reaches %v, the data nodes are %v", backed, nodeHosts)
	}
}

// TestPgafCreateCommands runs deploy/three-nodes/pgaf-create dry on each
// machine's file: the pg_autoctl commands it would run carry the file's
// values, and the monitor's -sync sets number_sync_standbys.
func TestPgafCreateCommands(t *testing.T) {
	l := readLayout(t)
	dry := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(threeNodes+"/pgaf-create", args...)
		cmd.Env = []string{"PGAF_DRY_RUN=1", "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pgaf-create %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := dry(threeNodes + "/monitor.env"); !strings.HasPrefix(out, "pg_autoctl create monitor ") ||
		!strings.Contains(out, "--hostname "+l.monitor["PGAF_HOSTNAME"]) || !strings.Contains(out, "--auth scram-sha-256") {
		t.Errorf("monitor: %s", out)
	}
	if out := dry("-sync", threeNodes+"/monitor.env"); !strings.Contains(out, "number-sync-standbys") || !strings.HasSuffix(strings.TrimSpace(out), " 1") {
		t.Errorf("monitor -sync: %s", out)
	}
	for file, n := range l.nodes {
		out := dry(threeNodes + "/" + file)
		for _, want := range []string{"pg_autoctl create postgres ", "--name " + n["PGAF_NAME"], "--hostname " + n["PGAF_HOSTNAME"],
			"--pgdata " + n["PGDATA"], "--replication-quorum true", "include_if_exists = '" + n["PGAF_INCLUDE"] + "'"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q lacks %q", file, out, want)
			}
		}
		// The monitor's URL holds '&': read unquoted from the file, it
		// must reach pg_autoctl whole (printed shell-quoted).
		if !strings.Contains(out, strings.ReplaceAll(strings.ReplaceAll(n["PGAF_MONITOR"], "?", `\?`), "&", `\&`)) {
			t.Errorf("%s: the monitor's URL is not passed whole: %s", file, out)
		}
	}
	cmd := exec.Command(threeNodes+"/pgaf-create", "-sync", threeNodes+"/node1.env")
	cmd.Env = []string{"PGAF_DRY_RUN=1", "PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("-sync with a data node's file was accepted: %s", out)
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	_, query, _ := strings.Cut(raw, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
