package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/postings"
)

// An answer of outcome_unknown is counted apart from the other 503s: the
// on-call engineer alerts on commits whose outcome a client must learn by
// its key, not on every refusal while the database was away.
func TestUnavailableCountedByReason(t *testing.T) {
	t.Parallel()
	m := httpserve.NewMetrics(httpserve.MetricsOptions{})
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(accessLog(time.Now, m.Public()))
	fail := func(reason postings.Reason) gin.HandlerFunc {
		return func(c *gin.Context) {
			writeError(c, &postings.Error{Code: postings.EUNAVAILABLE, Reason: reason, Message: "x"})
		}
	}
	r.GET("/unknown", fail(postings.ReasonOutcomeUnknown))
	r.GET("/down", fail(""))
	r.GET("/ok", func(c *gin.Context) { writeOK(c, nil) })
	for path, n := range map[string]int{"/unknown": 2, "/down": 3, "/ok": 1} {
		for range n {
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		}
	}
	got := map[string]float64{}
	for _, mt := range scrape(t, m)["gateway_http_unavailable_total"].GetMetric() {
		got[mt.Label[0].GetValue()] = mt.GetCounter().GetValue()
	}
	want := map[string]float64{"outcome_unknown": 2, "unavailable": 3}
	if len(got) != len(want) || got["outcome_unknown"] != 2 || got["unavailable"] != 3 {
		t.Errorf("gateway_http_unavailable_total %v, want %v", got, want)
	}
}
