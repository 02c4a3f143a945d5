package httpserve

import (
	"database/sql"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Metrics are the gateway process's metrics in one Prometheus registry
// (github.com/prometheus/client_golang): the requests of the /shop
// listener and of the internal listener, the ledger writer's counters, the
// idempotency keys in flight, Go's runtime and the process, and the
// database pool, and the Collectors of MetricsOptions. GET /metrics on
// the internal listener exposes all of it (docs/operations.md, "Metrics").
// Give the same Metrics to api.NewServer and partner.NewServer.
type Metrics struct {
	reg              *prometheus.Registry
	public, internal *ListenerMetrics
	// inFlight counts the keys held by the /shop listener's requests; set
	// by api.NewServer (CountInFlight).
	inFlight atomic.Pointer[func() int]
}

// MetricsOptions say what else the registry reports.
type MetricsOptions struct {
	// Ledger: its writer's batches, commands, splits and retries.
	Ledger WriterStats
	// DB: the pool's connections and waits (go_sql_* with db_name="gateway").
	DB *sql.DB
	// ReadRoute: where the standby-tolerant reads went, when they are
	// routed (DATABASE_READ_URL); nil reports nothing.
	ReadRoute ReadRouteStats
	// Build is what gateway_build_info reports.
	Build BuildInfo
	// Collectors are the process's other metrics (the database's state,
	// the workers, the failovers: internal/opsmetrics), registered as they
	// are.
	Collectors []prometheus.Collector
}

// BuildInfo names what runs: gateway_build_info{version, commit,
// goversion} 1. Empty fields read "unknown".
type BuildInfo struct {
	Version, Commit, GoVersion string
}

func (b BuildInfo) gauge() prometheus.Gauge {
	or := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_build_info",
		Help:        "Always 1; the labels name the gateway's module version, commit and Go version.",
		ConstLabels: prometheus.Labels{"version": or(b.Version), "commit": or(b.Commit), "goversion": or(b.GoVersion)}})
	g.Set(1)
	return g
}

// latencyBuckets are the upper bounds (seconds) of the latency histogram, up
// to the 60-second request time-out.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// NewMetrics makes the registry. The metric names and their labels are
// the ones docs/api.md lists; the internal listener's requests are
// gateway_internal_http_*, with the same labels, so that the /shop series
// stay what they were.
func NewMetrics(o MetricsOptions) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.public = newListenerMetrics(m.reg, "gateway_http",
		"HTTP requests by route template, method, HTTP status and envelope code.",
		"Latency of HTTP requests by route template.")
	m.internal = newListenerMetrics(m.reg, "gateway_internal_http",
		"Requests of the internal network API by route template, method, HTTP status and envelope code.",
		"Latency of requests of the internal network API by route template.")
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gateway_idempotency_in_flight",
			Help: "Requests holding an Idempotency-Key right now."}, func() float64 {
			if f := m.inFlight.Load(); f != nil {
				return float64((*f)())
			}
			return 0
		}),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		o.Build.gauge(),
	)
	m.reg.MustRegister(o.Collectors...)
	m.reg.MustRegister(DatabaseCollectors(o.Ledger, o.DB, o.ReadRoute)...)
	return m
}

// DatabaseCollectors are one database's figures: its ledger writer's
// counters, its pool's (go_sql_* with db_name="gateway") and its read
// route's; a nil one reports nothing. NewMetrics registers those of
// MetricsOptions; with cells, internal/app registers each cell's under a
// cell label instead (docs/operations.md, "Metrics").
func DatabaseCollectors(l WriterStats, db *sql.DB, r ReadRouteStats) []prometheus.Collector {
	var cs []prometheus.Collector
	if l != nil {
		cs = append(cs, ledgerCollector{l})
	}
	if db != nil {
		cs = append(cs, collectors.NewDBStatsCollector(db, "gateway"))
	}
	if r != nil {
		cs = append(cs, readRouteCollector{r})
	}
	return cs
}

// Registry is where the metrics are, for a caller that adds its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Public are the /shop listener's request metrics (gateway_http_*).
func (m *Metrics) Public() *ListenerMetrics { return m.public }

// Internal are the internal listener's (gateway_internal_http_*).
func (m *Metrics) Internal() *ListenerMetrics { return m.internal }

// ListenerMetrics are one listener's request counters and latencies. The label
// sets are bounded: route templates (or "unmatched"), methods, statuses,
// envelope codes; never a merchant or a URL.
type ListenerMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// unavailables are the EUNAVAILABLE answers by reason: outcome_unknown
	// (a commit whose outcome the client must learn by its key) apart from
	// the 503s that changed nothing. Reasons are postings' bounded set.
	unavailables *prometheus.CounterVec
}

func newListenerMetrics(reg prometheus.Registerer, prefix, requestsHelp, latencyHelp string) *ListenerMetrics {
	m := &ListenerMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + "_requests_total", Help: requestsHelp},
			[]string{"route", "method", "status", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: prefix + "_request_duration_seconds", Help: latencyHelp,
			Buckets: latencyBuckets}, []string{"route"}),
		unavailables: prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + "_unavailable_total",
			Help: "Requests answered unavailable (503) by reason; reason=\"outcome_unknown\" is a commit whose outcome the client learns by its Idempotency-Key."},
			[]string{"reason"}),
	}
	reg.MustRegister(m.requests, m.latency, m.unavailables)
	// Zero series for the reason alerts watch, so that rate() has a start.
	m.unavailables.WithLabelValues(string(postings.ReasonOutcomeUnknown))
	return m
}

// Unavailable records one 503 of reason ("" is "unavailable").
func (m *ListenerMetrics) Unavailable(reason string) {
	if reason == "" {
		reason = "unavailable"
	}
	m.unavailables.WithLabelValues(reason).Inc()
}

// Observe records one request. code is the envelope code the request was
// answered with (0 when none was recorded).
func (m *ListenerMetrics) Observe(route, method string, status int, code any, elapsed time.Duration) {
	c, _ := code.(int)
	m.requests.WithLabelValues(route, method, strconv.Itoa(status), strconv.Itoa(c)).Inc()
	m.latency.WithLabelValues(route).Observe(elapsed.Seconds())
}

// ledgerCollector reports the ledger writer's counters, read once per
// scrape.
type ledgerCollector struct{ l WriterStats }

var (
	descBatches  = prometheus.NewDesc("gateway_ledger_batches_total", "Transactions committed by the ledger writer.", nil, nil)
	descCommands = prometheus.NewDesc("gateway_ledger_commands_total", "Commands in the committed transactions.", nil, nil)
	descSplits   = prometheus.NewDesc("gateway_ledger_splits_total", "Batches that failed whole and ran command by command.", nil, nil)
	descRetries  = prometheus.NewDesc("gateway_ledger_retries_total", "Transactions retried after a transient failure.", nil, nil)
)

func (ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descBatches
	ch <- descCommands
	ch <- descSplits
	ch <- descRetries
}

func (c ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.l.Stats()
	ch <- prometheus.MustNewConstMetric(descBatches, prometheus.CounterValue, float64(st.Batches))
	ch <- prometheus.MustNewConstMetric(descCommands, prometheus.CounterValue, float64(st.Commands))
	ch <- prometheus.MustNewConstMetric(descSplits, prometheus.CounterValue, float64(st.Splits))
	ch <- prometheus.MustNewConstMetric(descRetries, prometheus.CounterValue, float64(st.Retries))
}

// CountInFlight makes gateway_idempotency_in_flight count: the keys held
// by the /shop listener's requests.
func (m *Metrics) CountInFlight(count func() int) {
	m.inFlight.Store(&count)
}

// Handler serves the registry in the Prometheus text exposition.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// WriterStats are the ledger writer's counters that /metrics shows
// (*ledger.Ledger).
type WriterStats interface {
	Stats() ledger.Stats
}
