package opsmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Worker is what a background worker reports of itself (internal/workers'
// Health, adapted by internal/app).
type Worker struct {
	Name     string
	Running  bool
	Steps    int64
	Failures int64     // steps that ended in an error since start
	LastOK   time.Time // when a step last succeeded (zero: never)
	Failing  bool      // the last step failed
}

var (
	descWorkerLastOK    = desc("gateway_worker_last_success_timestamp_seconds", "When the worker's last successful step ended (Unix time); 0: none yet.", "worker")
	descWorkerFailing   = desc("gateway_worker_failing", "1 while the worker's last step failed.", "worker")
	descWorkerFailures  = desc("gateway_worker_failures_total", "Steps of the worker that ended in an error.", "worker")
	descWorkerSteps     = desc("gateway_worker_steps_total", "Steps the worker ran.", "worker")
	descWorkerRunning   = desc("gateway_worker_running", "1 while the worker runs.", "worker")
	descWorkerCollector = []*prometheus.Desc{descWorkerLastOK, descWorkerFailing, descWorkerFailures, descWorkerSteps, descWorkerRunning}
)

// Workers reports the workers' health as health gives it at each scrape
// (in memory: no query).
type Workers func() []Worker

// Describe implements prometheus.Collector.
func (Workers) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descWorkerCollector {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (w Workers) Collect(ch chan<- prometheus.Metric) {
	for _, h := range w() {
		lastOK := 0.0
		if !h.LastOK.IsZero() {
			lastOK = float64(h.LastOK.UnixNano()) / 1e9
		}
		ch <- prometheus.MustNewConstMetric(descWorkerLastOK, prometheus.GaugeValue, lastOK, h.Name)
		ch <- prometheus.MustNewConstMetric(descWorkerFailing, prometheus.GaugeValue, boolFloat(h.Failing), h.Name)
		ch <- prometheus.MustNewConstMetric(descWorkerFailures, prometheus.CounterValue, float64(h.Failures), h.Name)
		ch <- prometheus.MustNewConstMetric(descWorkerSteps, prometheus.CounterValue, float64(h.Steps), h.Name)
		ch <- prometheus.MustNewConstMetric(descWorkerRunning, prometheus.GaugeValue, boolFloat(h.Running), h.Name)
	}
}

// Database reports the gateway's view of its database hosts (the watch of
// ledger/dbwatch.go): whether a writable host was found a moment ago, and
// how many times the writable host changed (a failover or switchover).
func Database(writable func() bool, writerChanges func() int64) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gateway_database_writable",
			Help: "1 while a database host was found writable by the last probes (what /readyz answers on)."},
			func() float64 { return boolFloat(writable()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gateway_database_failovers_total",
			Help: "Times the writable database host changed to another host (a failover or a switchover)."},
			func() float64 { return float64(writerChanges()) }),
	}
}
