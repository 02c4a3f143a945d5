package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/paygate/gateway/internal/httpserve"
)

// GET /metrics is on the internal listener only; with a metrics token set
// it is refused without that token (and with the partners' token), and
// served with it. No database: the registry alone.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	const partners, monitoring = "itk_partners-token-0001", "mtk_monitoring-token-01"
	m := httpserve.NewMetrics(httpserve.MetricsOptions{})
	public := httptest.NewServer(NewServer(Deps{Metrics: m}))
	t.Cleanup(public.Close)
	open := httptest.NewServer(NewInternalServer(PartnerDeps{Token: partners, Metrics: m}))
	t.Cleanup(open.Close)
	guarded := httptest.NewServer(NewInternalServer(PartnerDeps{Token: partners, Metrics: m, MetricsToken: monitoring}))
	t.Cleanup(guarded.Close)
	for _, tc := range []struct {
		name, url, token string
		want             int
	}{
		{"public listener", public.URL, "", http.StatusNotFound},
		{"public listener with the token", public.URL, monitoring, http.StatusNotFound},
		{"internal, no token set", open.URL, "", http.StatusOK},
		{"internal, token set, none given", guarded.URL, "", http.StatusUnauthorized},
		{"internal, the partners' token", guarded.URL, partners, http.StatusUnauthorized},
		{"internal, a wrong token", guarded.URL, monitoring + "x", http.StatusUnauthorized},
		{"internal, the metrics token", guarded.URL, monitoring, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tc.url+"/metrics", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusOK {
				if fams := parseExposition(t, resp); fams["gateway_build_info"] == nil {
					t.Errorf("no gateway_build_info")
				}
			}
		})
	}
}

// parseExposition parses a /metrics answer with Prometheus' own text
// parser: what a scrape would accept.
func parseExposition(t *testing.T, resp *http.Response) map[string]*dtoFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return fams
}

// gateway_build_info names the build; unknown parts read "unknown".
func TestBuildInfoMetric(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b    httpserve.BuildInfo
		want map[string]string
	}{
		{httpserve.BuildInfo{Version: "v1.2.3", Commit: "abc123", GoVersion: "go1.26.8"},
			map[string]string{"version": "v1.2.3", "commit": "abc123", "goversion": "go1.26.8"}},
		{httpserve.BuildInfo{}, map[string]string{"version": "unknown", "commit": "unknown", "goversion": "unknown"}},
	} {
		m := httpserve.NewMetrics(httpserve.MetricsOptions{Build: tc.b})
		fams := scrape(t, m)
		f := fams["gateway_build_info"]
		if f == nil || len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != 1 {
			t.Fatalf("gateway_build_info: %v", f)
		}
		got := map[string]string{}
		for _, l := range f.Metric[0].Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s=%q, want %q", k, got[k], v)
			}
		}
		if !strings.Contains(f.GetHelp(), "version") {
			t.Errorf("help %q", f.GetHelp())
		}
	}
}

// scrape serves m on an internal listener and parses its /metrics.
func scrape(t *testing.T, m *httpserve.Metrics) map[string]*dtoFamily {
	t.Helper()
	srv := httptest.NewServer(NewInternalServer(PartnerDeps{Metrics: m}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return parseExposition(t, resp)
}

// dtoFamily is a parsed metric family.
type dtoFamily = dto.MetricFamily
