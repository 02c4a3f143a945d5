package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// syncBuffer is a log sink the server writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testServer is the real gateway over HTTPS on a fresh database.
type testServer struct {
	t      testing.TB
	l      *gatewaytest.Gateway
	srv    *httptest.Server
	client *http.Client
	logs   *syncBuffer
	// metrics is the registry NewServer records into, exposed by the
	// internal listener's /metrics (metricsText).
	metrics *httpserve.Metrics
}

type serverOptions struct {
	proxies      []netip.Prefix
	timeout      time.Duration
	bodyBytesMax int64
	ledgerNow    func() time.Time
	rateLimit    RateLimit
	allow        callbackurl.AllowList // Deps.CallbackAllow
	db           *database.DBOptions   // the pool's settings (short lock or statement time-outs); nil: pgtest's
	limits       Limits
	versions     versionTable // Deps.versions: a test-only later version; nil: the gateway's
}

// newTestServer starts the gateway as cmd/gateway serves it — the
// http.Server of NewHTTPServer on WrapListener's listener (the per-client
// bound of connections, plain HTTP answered, TLS of TLSConfig) — and after
// the test checks that the ledger verifies.
func newTestServer(t testing.TB, opts serverOptions) *testServer {
	t.Helper()
	var db *bun.DB
	if opts.db == nil {
		db = pgtest.NewDB(t)
	} else {
		var err error
		if db, err = database.OpenDB(context.Background(), pgtest.NewDatabase(t), *opts.db); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	l := gatewaytest.New(t, db, gatewaytest.Options{Ledger: ledger.Config{Now: opts.ledgerNow}})
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	metrics := httpserve.NewMetrics(httpserve.MetricsOptions{Ledger: l.Ledger})
	h := NewServer(Deps{
		Metrics: metrics,
		Log:     log, DB: db, Merchants: l.Merchants, Accounts: l.Cards, Cards: l.Cards, ReadKeys: l.Ledger, Bills: l.Bills,
		Remittances: l.Remit, Stats: l.Ledger, Sandbox: newSandbox(l.Cards, l.Network, l.Remit, l.Remit, l.Ledger),
		WebhookSettings: l.Merchants, Webhooks: l.Deliveries, Keys: l.Merchants,
		TrustedProxies: opts.proxies, RequestTimeout: opts.timeout, BodyBytesMax: opts.bodyBytesMax,
		RateLimit: opts.rateLimit, CallbackAllow: opts.allow, Limits: opts.limits,
		versions: opts.versions,
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config = httpserve.NewHTTPServer(h, opts.limits, log)
	// WrapListener's chain, but for TLS, which httptest adds with its own
	// certificate when it starts.
	lim := opts.limits.WithDefaults()
	srv.Listener = httpserve.RefusePlainHTTP(httpserve.LimitConnsPerClient(srv.Listener, lim.ConnsPerClientMax, opts.proxies, log), log)
	srv.TLS = httpserve.TLSConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { mustVerify(t, l) })
	return &testServer{t: t, l: l, srv: srv, client: srv.Client(), logs: logs, metrics: metrics}
}

func mustVerify(t testing.TB, l *gatewaytest.Gateway) {
	t.Helper()
	rep, err := audit.New(l.Ledger).Verify(context.Background(), audit.VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	for _, p := range rep.Problems {
		t.Errorf("Verify: %s", p)
	}
}

// shop is a merchant with its credentials.
type shop struct {
	m     *merchant.Merchant
	creds *merchant.Credentials
}

func (s *testServer) newShop(spec merchant.Spec) shop {
	s.t.Helper()
	if spec.Name == "" {
		spec.Name = "Test shop"
	}
	if len(spec.Currencies) == 0 {
		spec.Currencies = []string{"USD", "EUR"}
	}
	m, creds, err := s.l.CreateMerchant(context.Background(), spec)
	if err != nil {
		s.t.Fatalf("CreateMerchant: %v", err)
	}
	return shop{m: m, creds: creds}
}

func (s *testServer) deposit(sh shop, cur string, minor int64) {
	s.t.Helper()
	if _, err := s.l.Deposit(context.Background(), sh.m.ID, cur, minor, nil); err != nil {
		s.t.Fatalf("Deposit: %v", err)
	}
}

// answer is a response with its envelope decoded.
type answer struct {
	status  int
	header  http.Header
	raw     []byte
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// request sends method path with body; headers are name, value pairs, sent
// as given (no canonicalisation), after the shop's credentials.
func (s *testServer) request(sh *shop, method, path, body string, headers ...string) *answer {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if sh != nil {
		req.Header.Set("X-Shop-No", sh.creds.ShopNo)
		req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "\x00delete" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header[headers[i]] = append(req.Header[headers[i]], headers[i+1])
	}
	return s.send(req)
}

func (s *testServer) send(req *http.Request) *answer {
	s.t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	a := &answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	if err := json.Unmarshal(raw, a); err != nil {
		s.t.Fatalf("%s %s: answer is not an envelope: %v: %s", req.Method, req.URL.Path, err, raw)
	}
	return a
}

// must checks an answer's HTTP status and envelope code.
func (a *answer) must(t testing.TB, status, code int) *answer {
	t.Helper()
	if a.status != status || a.Code != code {
		t.Fatalf("got HTTP %d code %d (%s), want HTTP %d code %d; body %s", a.status, a.Code, a.Message, status, code, a.raw)
	}
	if code != codeOK && string(a.Data) != "null" {
		t.Fatalf("failure with data: %s", a.raw)
	}
	return a
}

// into decodes data.
func (a *answer) into(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Data, v); err != nil {
		t.Fatalf("data: %v: %s", err, a.raw)
	}
}

// golden compares got with testdata/name.golden, or rewrites it with -update.
func golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: got\n%s\nwant\n%s", path, got, want)
	}
}
