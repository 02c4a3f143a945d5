package httpserve

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/paygate/gateway/internal/database"
)

// ReadRouteStats is where the standby-tolerant reads went
// (*database.ReadRoute, present when DATABASE_READ_URL is set).
type ReadRouteStats interface {
	Stats() database.ReadRouteStats
}

// readRouteCollector reports the read route's counters (docs/ha.md, "Reads
// from the standby"), read once per scrape: an operator sees how many reads
// the standby served and why the others went to the primary, which is
// what tells a lagging or lost standby apart from a healthy one.
type readRouteCollector struct{ r ReadRouteStats }

var (
	descReads = prometheus.NewDesc("gateway_read_route_reads_total",
		"Standby-tolerant reads by the server that served them (standby, primary) and why a read went to the primary (lagged, down, promoted; none for the standby).",
		[]string{"server", "reason"}, nil)
	descReadsWaited = prometheus.NewDesc("gateway_read_route_waited_total",
		"Reads served by the standby after waiting for its replay of the fence.", nil, nil)
)

func (readRouteCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descReads
	ch <- descReadsWaited
}

func (c readRouteCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.r.Stats()
	counter := func(v int64, server, reason string) {
		ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(v), server, reason)
	}
	counter(st.Standby, "standby", "none")
	counter(st.Lagged, "primary", "lagged")
	counter(st.Down, "primary", "down")
	counter(st.Promoted, "primary", "promoted")
	ch <- prometheus.MustNewConstMetric(descReadsWaited, prometheus.CounterValue, float64(st.Waited))
}
