package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/ledger/pgtest"
)

// One registry for both listeners: the internal API's requests, the
// ledger's counters, Go's runtime and the database pool all come out of
// the /shop listener's GET /metrics, and the /shop series keep their names
// and labels.
func TestMetricsOneRegistryForBothListeners(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	g := gatewaytest.New(t, db, gatewaytest.Options{})
	m := httpserve.NewMetrics(httpserve.MetricsOptions{Ledger: g.Ledger, DB: db.DB})
	public := httptest.NewServer(NewServer(Deps{DB: db, Merchants: g.Merchants, Accounts: g.Cards, Cards: g.Cards, ReadKeys: g.Ledger,
		Bills: g.Bills, Remittances: g.Remit, Stats: g.Ledger, Metrics: m}))
	t.Cleanup(public.Close)
	const token = "itk_metrics-test-token"
	internal := httptest.NewServer(NewInternalServer(PartnerDeps{Network: g.Network, Rails: g.Remit, Token: token, Metrics: m}))
	t.Cleanup(internal.Close)

	get := func(url string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get(internal.URL + "/network/authorizations?cardNo=crd_none")                                          // 401: no token
	get(internal.URL+"/network/authorizations/auth_nosuchauth000000000", "Authorization", "Bearer "+token) // 1201
	get(internal.URL + "/healthz")
	get(public.URL + "/healthz")
	// Not on the public listener: a 404 like any unknown path.
	if status, _ := get(public.URL + "/metrics"); status != http.StatusNotFound {
		t.Errorf("public GET /metrics: %d, want 404", status)
	}
	status, text := get(internal.URL + "/metrics")
	if status != 200 {
		t.Fatalf("GET /metrics: %d", status)
	}
	for _, want := range []string{
		`gateway_internal_http_requests_total{code="401",method="GET",route="/network/authorizations",status="401"} 1`,
		`gateway_internal_http_requests_total{code="1201",method="GET",route="/network/authorizations/:authId",status="200"} 1`,
		`gateway_internal_http_requests_total{code="0",method="GET",route="/healthz",status="200"} 1`,
		`gateway_internal_http_request_duration_seconds_count{route="/healthz"} 1`,
		// The partners' token does not open it and is not needed.
		// The /shop listener's own /healthz is counted apart.
		`gateway_http_requests_total{code="0",method="GET",route="/healthz",status="200"} 1`,
		"# TYPE gateway_ledger_batches_total counter",
		"gateway_idempotency_in_flight 0",
		"# TYPE go_goroutines gauge",
		"# TYPE go_memstats_heap_alloc_bytes gauge",
		`go_sql_max_open_connections{db_name="gateway"}`,
		`go_sql_wait_count_total{db_name="gateway"}`,
		"# TYPE process_resident_memory_bytes gauge",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
}
