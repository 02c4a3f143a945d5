package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The answers that never reach the ledger: unknown route, wrong method,
// body too large, and the 400s of the request decoders, each in the
// envelope and pinned by a golden file.
func TestErrorEnvelopes(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{bodyBytesMax: 1024})
	sh := s.fundedShop()
	tests := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"404_route", "GET", "/shop/nothing", "", 404, "no such endpoint"},
		{"404_outside_shop", "GET", "/", "", 404, "no such endpoint"},
		{"405_method", "DELETE", "/shop/card/info", "", 405, "method DELETE not allowed on this endpoint"},
		{"405_get_on_post", "GET", "/shop/card/create", "", 405, "method GET not allowed on this endpoint"},
		{"413_body_too_large", "POST", "/shop/card/create", `{"remark":"` + strings.Repeat("x", 2000) + `"}`, 413, "body: is larger than 1024 bytes"},
		{"400_unknown_field", "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1,"pan":"4111"}`, 400, "pan: is not a known field"},
		{"400_wrong_type", "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":[1]}`, 400, "amount: must be a number or a string holding a decimal number"},
		{"400_duplicate_key", "POST", "/shop/card/transfer", `{"cardNo":"a","cardNo":"b"}`, 400, "cardNo: appears more than once"},
		{"400_trailing_data", "POST", "/shop/card/cancel", `{"cardNo":"a"} {"cardNo":"b"}`, 400, "body: has data after the JSON object"},
		{"400_missing_fields", "POST", "/shop/card/transfer", `{"cardNo":"crd_1"}`, 400, "amount, currency, direction: are required"},
		{"400_amount_decimals", "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1.001}`, 400, "amount: USD allows at most 2 decimals"},
		{"400_amount_negative", "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":-1}`, 400, "amount: must not be negative"},
		{"400_currency", "POST", "/shop/card/create", `{"bin":"453201","currency":"usd","amount":1}`, 400, "currency: must be a three-letter upper-case ISO 4217 code"},
		{"400_direction", "POST", "/shop/card/transfer", `{"cardNo":"crd_1","amount":1,"currency":"USD","direction":"SIDEWAYS"}`, 400, "direction: must be IN or OUT"},
		{"400_not_json", "POST", "/shop/card/freeze", `cardNo=crd_1`, 400, "body: is not valid JSON (invalid character 'c' looking for beginning of value at byte 1)"},
		{"400_empty_body", "POST", "/shop/card/freeze", ``, 400, "body: is required: a JSON object"},
		{"400_query_missing", "GET", "/shop/card/info", "", 400, "cardNo: query parameter is required"},
		{"400_query_invalid", "GET", "/shop/card/balance?cardNo=a%20b", "", 400, "cardNo: must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.request(&sh, tt.method, tt.path, tt.body).must(t, tt.status, tt.status)
			if a.Message != tt.msg {
				t.Errorf("message %q, want %q", a.Message, tt.msg)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if a.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			golden(t, tt.name, a.raw)
		})
	}
	// A chunked body announces no length: the limit bites while reading.
	req, _ := http.NewRequest("POST", s.srv.URL+"/shop/card/create",
		io.NopCloser(strings.NewReader(`{"remark":"`+strings.Repeat("x", 2000)+`"}`)))
	req.Header.Set("X-Shop-No", sh.creds.ShopNo)
	req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	if a := s.send(req).must(t, 413, 413); a.Message != "body: is larger than 1024 bytes" {
		t.Errorf("chunked: %s", a.raw)
	}
	// The 400 for a missing header comes before anything else.
	a := s.request(nil, "POST", "/shop/card/create", `{}`).must(t, 400, 400)
	golden(t, "400_missing_header", a.raw)
}

// X-Request-Id is echoed when it is a sane token and made otherwise.
func TestRequestID(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	a := s.request(nil, "GET", "/shop/account", "", "X-Request-Id", "abc-123")
	if got := a.header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("echoed %q", got)
	}
	a = s.request(nil, "GET", "/shop/account", "", "X-Request-Id", "bad id\twith spaces")
	if got := a.header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Errorf("made %q", got)
	}
}

// A request past its deadline is answered 503 in the envelope.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{timeout: time.Nanosecond})
	sh := s.fundedShop()
	a := s.request(&sh, "GET", "/shop/account", "").must(t, 503, 503)
	golden(t, "503_timeout", a.raw)
}

// testEngine is the middleware of the server around one handler, for the
// answers no real endpoint gives on purpose.
func testEngine(log *slog.Logger, timeout time.Duration, h gin.HandlerFunc) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(withRequestID(log), accessLog(time.Now, httpserve.NewMetrics(httpserve.MetricsOptions{}).Public()), recoverPanic(), withTimeout(timeout))
	r.GET("/x", h)
	return r
}

func serveOnce(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestPanicIs500(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	h := testEngine(slog.New(slog.NewJSONHandler(&logs, nil)), time.Minute, func(c *gin.Context) {
		panic("boom: secret detail")
	})
	w := serveOnce(h, httptest.NewRequest("GET", "/x", nil))
	if w.Code != 500 {
		t.Fatalf("status %d", w.Code)
	}
	golden(t, "500_panic", w.Body.Bytes())
	if strings.Contains(w.Body.String(), "secret") {
		t.Error("panic detail shown")
	}
	if !strings.Contains(logs.String(), `"msg":"panic"`) || !strings.Contains(logs.String(), `"request_id":"req_`) {
		t.Errorf("panic not logged with the request id: %s", logs.String())
	}
}

func TestInternalErrorLoggedOnceAndHidden(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	h := testEngine(slog.New(slog.NewJSONHandler(&logs, nil)), time.Minute, func(c *gin.Context) {
		writeError(c, fmt.Errorf("pq: relation \"cards\" does not exist"))
	})
	w := serveOnce(h, httptest.NewRequest("GET", "/x", nil))
	if w.Code != 500 || w.Body.String() != `{"code":500,"message":"internal error","data":null}`+"\n" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if n := strings.Count(logs.String(), `relation \"cards\"`); n != 1 {
		t.Errorf("detail logged %d times: %s", n, logs.String())
	}
}

func TestDeadlineInHandlerIs503(t *testing.T) {
	t.Parallel()
	h := testEngine(slog.New(slog.NewJSONHandler(io.Discard, nil)), 20*time.Millisecond, func(c *gin.Context) {
		<-c.Request.Context().Done()
		writeError(c, &postings.Error{Code: postings.EUNAVAILABLE, Message: "the database is unavailable"})
	})
	w := serveOnce(h, httptest.NewRequest("GET", "/x", nil))
	if w.Code != 503 || !strings.Contains(w.Body.String(), messageTimeout) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

// A second request with an Idempotency-Key that is in flight is refused
// with 1009 without reaching the handler.
func TestIdempotencyKeyInProgress(t *testing.T) {
	t.Parallel()
	set := newInFlight()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(withRequestID(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	reached := 0
	r.POST("/x", func(c *gin.Context) { c.Set(merchantKey, &merchant.Merchant{ID: 7}) }, readRequest(set),
		func(c *gin.Context) { reached++; writeOK(c, nil) })
	post := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/x", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", key)
		return serveOnce(r, req)
	}
	if !set.acquire("7\x00busy") {
		t.Fatal("acquire")
	}
	w := post("busy")
	if w.Code != 200 || reached != 0 {
		t.Fatalf("%d reached %d", w.Code, reached)
	}
	golden(t, "1009_in_progress", w.Body.Bytes())
	set.release("7\x00busy")
	if w := post("busy"); w.Code != 200 || reached != 1 || !strings.Contains(w.Body.String(), `"code":200`) {
		t.Fatalf("after release: %s", w.Body)
	}
	if set.len() != 0 {
		t.Errorf("key still held after the request")
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give         error
		status, code int
	}{
		{postings.FieldErrorf("amount", "bad"), 400, 400},
		{postings.Errorf(postings.EUNAUTHENTICATED, "x"), 401, 401},
		{postings.Errorf(postings.EINSUFFICIENT, "x"), 200, 1001},
		{postings.ReasonErrorf(postings.ENOTFOUND, "card", "x"), 200, 1002},
		{postings.ReasonErrorf(postings.ENOTFOUND, "merchant", "x"), 200, 999},
		{postings.ReasonErrorf(postings.ESTATE, "card_frozen", "x"), 200, 1003},
		{postings.ReasonErrorf(postings.ESTATE, "card_cancelled", "x"), 200, 1004},
		{postings.ReasonErrorf(postings.ESTATE, "remit_final", "x"), 200, 999},
		{postings.ReasonErrorf(postings.EFORBIDDEN, "currency", "x"), 200, 1005},
		{postings.ReasonErrorf(postings.EFORBIDDEN, "bin", "x"), 200, 1006},
		{postings.ReasonErrorf(postings.ELIMIT, "daily_card_issue", "x"), 200, 1007},
		{postings.ReasonErrorf(postings.ELIMIT, "", "x"), 200, 1007},
		{postings.ReasonErrorf(postings.ECONFLICT, "idempotency_mismatch", "x"), 200, 1008},
		{postings.ReasonErrorf(postings.ECONFLICT, "idempotency_race", "x"), 200, 1009},
		{postings.ReasonErrorf(postings.ECONFLICT, "duplicate", "x"), 200, 999},
		{postings.Errorf(postings.EINPROGRESS, "x"), 200, 1009},
		{postings.ReasonErrorf(postings.EFORBIDDEN, "fx_pair", "x"), 200, 1010},
		{postings.ReasonErrorf(postings.ESTATE, "fx_rate_stale", "x"), 200, 1010},
		{postings.ReasonErrorf(postings.EUNAVAILABLE, "fx_rate_stale", "x"), 200, 1010},
		{postings.Errorf(postings.EUNAVAILABLE, "x"), 503, 503},
		{postings.Errorf(postings.EINTERNAL, "x"), 500, 500},
		{postings.Errorf("brand_new_code", "x"), 200, 999},
		{fmt.Errorf("wrapped: %w", postings.ReasonErrorf(postings.ENOTFOUND, "card", "x")), 200, 1002},
		{context.DeadlineExceeded, 503, 503},
		{io.ErrUnexpectedEOF, 500, 500},
	}
	for _, tt := range tests {
		if _, o := classify(tt.give); o.status != tt.status || o.code != tt.code {
			t.Errorf("%v: HTTP %d code %d, want %d %d", tt.give, o.status, o.code, tt.status, tt.code)
		}
	}
}

// Nothing secret reaches the logs through a whole card flow (create, info,
// transfer, freeze, unfreeze, cancel, and failing authentications, one with
// the private key sent as the public key): no public or private key, no
// PAN-like digit run, no body.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	k := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"5.00","remark":"REMARK-IN-BODY"}`)
	s.cardInfo(sh, k.CardNo)
	s.request(&sh, "POST", "/shop/card/transfer",
		fmt.Sprintf(`{"cardNo":%q,"amount":1,"currency":"USD","direction":"OUT"}`, k.CardNo), "Idempotency-Key", "KEY-IN-HEADER")
	s.request(&sh, "POST", "/shop/card/freeze", fmt.Sprintf(`{"cardNo":%q,"reason":"REASON-IN-BODY"}`, k.CardNo)).must(t, 200, 200)
	s.request(&sh, "POST", "/shop/card/unfreeze", fmt.Sprintf(`{"cardNo":%q}`, k.CardNo)).must(t, 200, 200)
	s.request(&sh, "POST", "/shop/card/cancel", fmt.Sprintf(`{"cardNo":%q}`, k.CardNo)).must(t, 200, 200)
	s.request(nil, "GET", "/shop/account", "", "X-Shop-No", sh.creds.ShopNo, "X-Public-Key", "pk_WRONG-KEY-ATTEMPT")
	s.request(nil, "GET", "/shop/account", "", "X-Shop-No", sh.creds.ShopNo, "X-Public-Key", sh.creds.PrivateKey).must(t, 401, 401)
	// The access line is written after the answer: wait for the last one.
	const requests = 8
	deadline := time.Now().Add(answerWait) // a bound for a lost line, not a measure
	for strings.Count(s.logs.String(), `"msg":"request"`) < requests && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	logs := s.logs.String()
	if strings.Count(logs, `"msg":"request"`) < requests {
		t.Fatalf("access lines missing: %s", logs)
	}
	for _, secret := range []string{sh.creds.PublicKey, sh.creds.PrivateKey, "pk_", "sk_", "WRONG-KEY", "REMARK-IN-BODY",
		"REASON-IN-BODY", "KEY-IN-HEADER"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs hold %q", secret)
		}
	}
	if pan := regexp.MustCompile(`\d{13,19}`).FindString(logs); pan != "" {
		t.Errorf("logs hold a PAN-like number %s: %s", pan, logs)
	}
	// Every line is JSON with a request id, and the access lines carry the
	// fields operators need.
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if m["request_id"] == nil {
			t.Errorf("no request_id: %s", line)
		}
		if m["msg"] == "request" {
			for _, f := range []string{"method", "route", "status", "latency_ms"} {
				if m[f] == nil {
					t.Errorf("no %s: %s", f, line)
				}
			}
		}
	}
	if !strings.Contains(logs, `"shop_no":"`+sh.creds.ShopNo+`"`) || !strings.Contains(logs, `"route":"/shop/card/create"`) {
		t.Errorf("access lines lack shop_no or route: %s", logs)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"1.00"}`)
	s.request(&sh, "GET", "/shop/card/info?cardNo=crd_none", "")
	s.request(nil, "GET", "/nowhere", "")
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := s.client.Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"ok"`)) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	// The /shop listener's metrics come out of the internal listener.
	internal := httptest.NewServer(NewInternalServer(PartnerDeps{Metrics: s.metrics}))
	t.Cleanup(internal.Close)
	resp, err := http.Get(internal.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		"# TYPE gateway_http_requests_total counter",
		// client_golang writes the labels in name order.
		`gateway_http_requests_total{code="200",method="POST",route="/shop/card/create",status="200"} 1`,
		`gateway_http_requests_total{code="1002",method="GET",route="/shop/card/info",status="200"} 1`,
		`gateway_http_requests_total{code="404",method="GET",route="unmatched",status="404"} 1`,
		"# TYPE gateway_http_request_duration_seconds histogram",
		`gateway_http_request_duration_seconds_bucket{route="/shop/card/create",le="+Inf"} 1`,
		`gateway_http_request_duration_seconds_count{route="/shop/card/create"} 1`,
		"# TYPE gateway_ledger_batches_total counter",
		"gateway_idempotency_in_flight 0",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s:\n%s", want, text)
		}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
}
