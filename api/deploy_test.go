package api

import (
	"database/sql"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver of the pool whose go_sql_* series the dashboard reads
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/opsmetrics"
	"github.com/paygate/gateway/ledger"
)

// The alert rules and the dashboard of deploy/ (docs/operations.md,
// "Alerts and runbooks") read only metrics the gateway exports: a renamed
// metric would otherwise leave an alert that can never fire.

type fakeStats struct{}

func (fakeStats) Stats() ledger.Stats { return ledger.Stats{} }

type fakeReads struct{}

func (fakeReads) Stats() database.ReadRouteStats { return database.ReadRouteStats{} }

// notOurs are series a Prometheus server makes itself.
var notOurs = map[string]bool{"up": true}

// exportedNames is every metric name the process can export, with a
// histogram's _bucket, _sum and _count: the registry's series once each
// vector has a child, and every description of the on-call collectors
// (their series are conditional: a standby, a backup).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	db, err := sql.Open("pgx", "postgres://127.0.0.1:1/none") // never connected: only its pool's counters are read
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ops := []prometheus.Collector{opsmetrics.NewCollector(opsmetrics.Options{DB: db}), opsmetrics.Workers(nil)}
	ops = append(ops, opsmetrics.Database(func() bool { return true }, func() int64 { return 0 })...)
	m := httpserve.NewMetrics(httpserve.MetricsOptions{Ledger: fakeStats{}, DB: db, ReadRoute: fakeReads{}, Collectors: ops[2:]})
	for _, l := range []*httpserve.ListenerMetrics{m.Public(), m.Internal()} {
		l.Observe("/x", "GET", 200, 0, time.Millisecond)
		l.Unavailable("")
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for _, c := range ops[:2] {
		ch := make(chan *prometheus.Desc, 64)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			names[fqName.FindStringSubmatch(d.String())[1]] = true
		}
	}
	return names
}

// metricNames are the metric names an expression selects; it fails the
// test when the expression does not parse.
func metricNames(t *testing.T, where, expr string) []string {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return nil
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs.Name)
		}
		return nil
	})
	if len(out) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	return out
}

// The rules pass Prometheus' own checks (those of `promtool check rules`:
// rulefmt parses and validates every group, rule, expression and
// template), every alert has a severity and a runbook section that exists
// in docs/operations.md, and every expression reads exported metrics.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	names := exportedNames(t)
	groups, errs := rulefmt.ParseFile("../deploy/prometheus/alerts.yml", false)
	for _, err := range errs {
		t.Errorf("deploy/prometheus/alerts.yml: %v", err)
	}
	if groups == nil {
		t.FailNow()
	}
	ops, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	alerts := map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
			if s := r.Labels["severity"]; s != "page" && s != "ticket" {
				t.Errorf("%s: severity %q, want page or ticket", r.Alert, s)
			}
			rb, ok := strings.CutPrefix(r.Annotations["runbook"], "docs/operations.md#")
			if !ok || !strings.Contains(string(ops), "<a id=\""+rb+"\"></a>") {
				t.Errorf("%s: runbook %q is not an anchor of docs/operations.md", r.Alert, r.Annotations["runbook"])
			}
			for _, n := range metricNames(t, r.Alert, r.Expr) {
				if !names[n] && !notOurs[n] {
					t.Errorf("%s reads %s, which the gateway does not export", r.Alert, n)
				}
			}
		}
	}
	// What the issue asks to be paged or ticketed for.
	for _, want := range []string{"GatewayNotReady", "GatewayWriteUnavailable", "PostgresReplicationLag", "PostgresSyncStandbyMissing",
		"PostgresFailoverHappened", "GatewayCallbackBacklog", "GatewayWorkerStalled", "PostgresBackupTooOld",
		"PostgresWALArchiveTooOld", "GatewayOutcomeUnknownRate", "PostgresStandbyLost"} {
		if !alerts[want] {
			t.Errorf("no alert %s", want)
		}
	}
}

// The dashboard is valid JSON, its panels have unique ids, and every
// panel's expression parses and reads exported metrics.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	names := exportedNames(t)
	b, err := os.ReadFile("../deploy/grafana/gateway.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      *int   `json:"id"`
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("deploy/grafana/gateway.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("a dashboard needs a title, a uid and panels: %q %q %d", d.Title, d.UID, len(d.Panels))
	}
	ids := map[int]string{}
	for _, p := range d.Panels {
		if p.ID == nil || p.Title == "" || p.Type == "" || len(p.Targets) == 0 {
			t.Errorf("panel %q: needs an id, a title, a type and a target", p.Title)
			continue
		}
		if other, dup := ids[*p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, *p.ID)
		}
		ids[*p.ID] = p.Title
		for _, tg := range p.Targets {
			for _, n := range metricNames(t, p.Title, tg.Expr) {
				if !names[n] {
					t.Errorf("panel %q reads %s, which the gateway does not export", p.Title, n)
				}
			}
		}
	}
}
