package api

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/ledger"
)

// latencyBuckets are the upper bounds (seconds) of the latency histogram, up
// to the 60-second request time-out.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// metrics are the request counters, kept by hand in the Prometheus text
// format: the label sets are bounded (route templates, statuses, envelope
// codes), so a map under one mutex is plenty.
type metrics struct {
	mu        sync.Mutex
	requests  map[requestLabels]uint64
	latencies map[string]*histogram // by route
}

type requestLabels struct {
	route, method string
	status, code  int
}

type histogram struct {
	counts []uint64 // one per bucket, not cumulative
	sum    float64
	count  uint64
}

func newMetrics() *metrics {
	return &metrics{requests: map[requestLabels]uint64{}, latencies: map[string]*histogram{}}
}

func (m *metrics) observe(route, method string, status int, code any, elapsed time.Duration) {
	c, _ := code.(int)
	s := elapsed.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[requestLabels{route, method, status, c}]++
	h := m.latencies[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets))}
		m.latencies[route] = h
	}
	for i, le := range latencyBuckets {
		if s <= le {
			h.counts[i]++
			break
		}
	}
	h.sum += s
	h.count++
}

// write renders the exposition in a stable order.
func (m *metrics) write(w io.Writer, st ledger.Stats, inFlight int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP gateway_http_requests_total HTTP requests by route template, method, HTTP status and envelope code.")
	fmt.Fprintln(w, "# TYPE gateway_http_requests_total counter")
	keys := make([]requestLabels, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.route != b.route {
			return a.route < b.route
		}
		if a.method != b.method {
			return a.method < b.method
		}
		if a.status != b.status {
			return a.status < b.status
		}
		return a.code < b.code
	})
	for _, k := range keys {
		fmt.Fprintf(w, "gateway_http_requests_total{route=%s,method=%s,status=\"%d\",code=\"%d\"} %d\n",
			quoteLabel(k.route), quoteLabel(k.method), k.status, k.code, m.requests[k])
	}
	fmt.Fprintln(w, "# HELP gateway_http_request_duration_seconds Latency of HTTP requests by route template.")
	fmt.Fprintln(w, "# TYPE gateway_http_request_duration_seconds histogram")
	routes := make([]string, 0, len(m.latencies))
	for r := range m.latencies {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		h := m.latencies[r]
		var cum uint64
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(w, "gateway_http_request_duration_seconds_bucket{route=%s,le=\"%s\"} %d\n",
				quoteLabel(r), strconv.FormatFloat(le, 'g', -1, 64), cum)
		}
		fmt.Fprintf(w, "gateway_http_request_duration_seconds_bucket{route=%s,le=\"+Inf\"} %d\n", quoteLabel(r), h.count)
		fmt.Fprintf(w, "gateway_http_request_duration_seconds_sum{route=%s} %s\n", quoteLabel(r), strconv.FormatFloat(h.sum, 'g', -1, 64))
		fmt.Fprintf(w, "gateway_http_request_duration_seconds_count{route=%s} %d\n", quoteLabel(r), h.count)
	}
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	counter("gateway_ledger_batches_total", "Transactions committed by the ledger writer.", st.Batches)
	counter("gateway_ledger_commands_total", "Commands in the committed transactions.", st.Commands)
	counter("gateway_ledger_splits_total", "Batches that failed whole and ran command by command.", st.Splits)
	counter("gateway_ledger_retries_total", "Transactions retried after a transient failure.", st.Retries)
	fmt.Fprintln(w, "# HELP gateway_idempotency_in_flight Requests holding an Idempotency-Key right now.")
	fmt.Fprintln(w, "# TYPE gateway_idempotency_in_flight gauge")
	fmt.Fprintf(w, "gateway_idempotency_in_flight %d\n", inFlight)
}

// quoteLabel quotes a label value per the exposition format.
func quoteLabel(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// handleMetrics serves the Prometheus text exposition.
func handleMetrics(m *metrics, l WriterStats, inflight *inFlight) gin.HandlerFunc {
	return func(c *gin.Context) {
		var st ledger.Stats
		if l != nil {
			st = l.Stats()
		}
		c.Status(http.StatusOK)
		c.Header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.write(c.Writer, st, inflight.len())
	}
}
