package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGateway answers /shop requests from a script, one answer per
// attempt, and records what each attempt carried.
type fakeGateway struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request)
	keys    []string // Idempotency-Key of each attempt ("" without one)
	bodies  []string
}

func (f *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.keys)
	f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
	f.bodies = append(f.bodies, string(b))
	answer := f.answers[min(n, len(f.answers)-1)]
	f.mu.Unlock()
	if r.Header.Get("X-Shop-No") != "SH0000000001" || r.Header.Get("X-Public-Key") != "pk_test" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"code":401,"message":"unknown shop number or wrong public key","data":null}`)
		return
	}
	answer(w, r)
}

func envelope(status int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Request-Id", "req_test")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// dropConnection is no HTTP answer at all: the connection closes.
func dropConnection(w http.ResponseWriter, _ *http.Request) {
	hj, _ := w.(http.Hijacker)
	conn, _, _ := hj.Hijack()
	conn.Close()
}

const (
	okTransfer = `{"code":200,"message":"success","data":{"txId":"trf_1","cardNo":"crd_1","direction":"IN","amount":0.01,
		"currency":"USD","cardAmount":0.01,"cardCurrency":"USD","cardBalance":12345678901234567.89,"fundingBalance":100.00,"createdAt":"2026-03-01T10:00:00Z"}}`
	unavailable = `{"code":503,"message":"service unavailable; retry later with the same Idempotency-Key","data":null}`
	rateLimited = `{"code":429,"message":"rate limit exceeded; retry after the number of seconds in Retry-After","data":null}`
)

// newFake returns a client of a fake gateway whose waits are recorded,
// not slept.
func newFake(t *testing.T, p RetryPolicy, answers ...func(http.ResponseWriter, *http.Request)) (*Client, *fakeGateway, *[]time.Duration) {
	t.Helper()
	f := &fakeGateway{answers: answers}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL, ShopNo: "SH0000000001", PublicKey: "pk_test", HTTPClient: srv.Client(), Retry: p})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.caller.sleep = func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err() == nil
	}
	return c, f, waits
}

var transferReq = TransferRequest{CardNo: "crd_1", Amount: MustDecimal("0.01"), Currency: "USD", Direction: DirectionIn}

// A POST gets a key, and every retry of it the same key, until it is
// answered; the answer's amounts are exact, however many digits.
func TestRetryKeepsTheKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failure func(http.ResponseWriter, *http.Request)
	}{
		{"503", envelope(503, unavailable, "Retry-After", "2")},
		{"429", envelope(429, rateLimited, "Retry-After", "1")},
		{"no answer", dropConnection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f, waits := newFake(t, RetryPolicy{}, tc.failure, tc.failure, envelope(200, okTransfer))
			tr, err := c.Transfer(context.Background(), transferReq)
			if err != nil {
				t.Fatalf("Transfer: %v", err)
			}
			if tr.CardBalance.String() != "12345678901234567.89" || tr.Amount.String() != "0.01" {
				t.Errorf("amounts %s %s, want the exact text", tr.CardBalance, tr.Amount)
			}
			if len(f.keys) != 3 || f.keys[0] == "" || f.keys[1] != f.keys[0] || f.keys[2] != f.keys[0] {
				t.Errorf("keys of the attempts: %q, want one key three times", f.keys)
			}
			if !strings.HasPrefix(f.keys[0], "idem_") || f.bodies[2] != f.bodies[0] {
				t.Errorf("key %q, bodies %q", f.keys[0], f.bodies)
			}
			if len(*waits) != 2 {
				t.Fatalf("waits %v, want 2", *waits)
			}
		})
	}
}

// The wait before a retry is at least Retry-After, and jittered within
// [d/2, d] of the exponential back-off otherwise.
func TestRetryHonoursRetryAfter(t *testing.T) {
	c, _, waits := newFake(t, RetryPolicy{BaseDelay: 10 * time.Millisecond},
		dropConnection, envelope(503, unavailable, "Retry-After", "2"), envelope(429, rateLimited, "Retry-After", "1"), envelope(200, okTransfer))
	if _, err := c.Transfer(context.Background(), transferReq); err != nil {
		t.Fatal(err)
	}
	w := *waits
	if len(w) != 3 || w[0] < 5*time.Millisecond || w[0] > 10*time.Millisecond || w[1] < 2*time.Second || w[2] < time.Second {
		t.Errorf("waits %v, want 5-10ms (the first back-off), then ≥2s and ≥1s (Retry-After)", w)
	}
}

// Bounded: MaxAttempts attempts, then the last failure, with the key to
// retry with later.
func TestRetryIsBounded(t *testing.T) {
	c, f, _ := newFake(t, RetryPolicy{MaxAttempts: 3}, envelope(503, unavailable, "Retry-After", "2"))
	_, err := c.Transfer(context.Background(), transferReq, WithIdempotencyKey("my-key-1"))
	var e *Error
	if !errors.As(err, &e) || e.Status != 503 || e.Code != 503 || e.Attempts != 3 || e.IdempotencyKey != "my-key-1" ||
		e.RetryAfter != 2*time.Second || e.RequestID != "req_test" || !e.Temporary() || e.Business() {
		t.Fatalf("error %#v", err)
	}
	if len(f.keys) != 3 || f.keys[2] != "my-key-1" {
		t.Errorf("keys %q", f.keys)
	}
	// A Retry-After beyond the policy's bound ends the retries at once.
	c, f, _ = newFake(t, RetryPolicy{RetryAfterMax: time.Second}, envelope(503, unavailable, "Retry-After", "30"))
	if _, err := c.Transfer(context.Background(), transferReq); err == nil || len(f.keys) != 1 {
		t.Errorf("Retry-After past the bound: %v after %d attempts, want the error after 1", err, len(f.keys))
	}
}

// Never retried: a 4xx other than 429, a business failure, 1009 unless
// asked, a POST without a key.
func TestNoRetry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter, *http.Request)
		policy RetryPolicy
		opts   []CallOption
		want   func(e *Error) bool
	}{
		{"400", envelope(400, `{"code":400,"message":"amount: USD allows at most 2 decimals","data":null}`), RetryPolicy{}, nil,
			func(e *Error) bool { return e.Status == 400 && e.Field == "amount" && !e.Temporary() }},
		{"400 of several fields", envelope(400, `{"code":400,"message":"amount, currency, direction: are required","data":null}`), RetryPolicy{}, nil,
			func(e *Error) bool { return e.Field == "amount, currency, direction" }},
		{"408", envelope(408, `{"code":408,"message":"body: no data for 10s: send the body without pausing","data":null}`), RetryPolicy{}, nil,
			func(e *Error) bool { return e.Status == 408 && e.Field == "" }},
		{"500", envelope(500, `{"code":500,"message":"internal error","data":null}`), RetryPolicy{}, nil,
			func(e *Error) bool { return e.Status == 500 && !e.Temporary() }},
		{"business failure", envelope(200, `{"code":1001,"message":"insufficient funds","data":null}`), RetryPolicy{}, nil,
			func(e *Error) bool {
				return e.Business() && errors.Is(e, CodeInsufficientFunds) && !errors.Is(e, CodeCardNotFound) && e.Message == "insufficient funds"
			}},
		{"1009 by default", envelope(200, `{"code":1009,"message":"in progress","data":null}`), RetryPolicy{}, nil,
			func(e *Error) bool { return e.Code == CodeInProgress && e.Temporary() }},
		{"503 without a key", envelope(503, unavailable), RetryPolicy{}, []CallOption{WithoutIdempotencyKey()},
			func(e *Error) bool { return e.Status == 503 && e.IdempotencyKey == "" }},
		{"no retries", envelope(503, unavailable), NoRetry, nil, func(e *Error) bool { return e.Status == 503 }},
		{"not an envelope", envelope(502, `<html>bad gateway</html>`), RetryPolicy{}, nil,
			func(e *Error) bool { return e.Status == 502 && e.Code == 0 && e.Err != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f, _ := newFake(t, tc.policy, tc.answer, envelope(200, okTransfer))
			_, err := c.Transfer(context.Background(), transferReq, tc.opts...)
			var e *Error
			if !errors.As(err, &e) || !tc.want(e) || e.Attempts != 1 {
				t.Errorf("error %#v", err)
			}
			if len(f.keys) != 1 {
				t.Errorf("%d attempts, want 1", len(f.keys))
			}
		})
	}
	// With RetryInProgress, 1009 is retried with the same key.
	c, f, _ := newFake(t, RetryPolicy{RetryInProgress: true}, envelope(200, `{"code":1009,"message":"in progress","data":null}`), envelope(200, okTransfer))
	if _, err := c.Transfer(context.Background(), transferReq); err != nil || len(f.keys) != 2 || f.keys[0] != f.keys[1] {
		t.Errorf("1009 with RetryInProgress: %v, keys %q", err, f.keys)
	}
}

// A GET is retried without a key; a cancelled context stops the retries.
func TestRetryGETAndContext(t *testing.T) {
	c, f, _ := newFake(t, RetryPolicy{}, envelope(503, unavailable), envelope(200,
		`{"code":200,"message":"success","data":{"cardNo":"crd_1","balance":1.00,"held":0.00,"currency":"USD"}}`))
	b, err := c.CardBalance(context.Background(), "crd_1")
	if err != nil || b.Balance.String() != "1.00" || len(f.keys) != 2 || f.keys[0] != "" {
		t.Errorf("GET: %+v %v, keys %q", b, err, f.keys)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, f, _ = newFake(t, RetryPolicy{MaxAttempts: 10}, envelope(503, unavailable))
	c.caller.sleep = func(context.Context, time.Duration) bool { cancel(); return false }
	_, err = c.Transfer(ctx, transferReq)
	var e *Error
	if !errors.As(err, &e) || e.Status != 503 || len(f.keys) != 1 {
		t.Errorf("cancelled during the wait: %v after %d attempts", err, len(f.keys))
	}
	// Already cancelled: no answer, not temporary.
	_, err = c.Transfer(ctx, transferReq)
	if !errors.As(err, &e) || e.Status != 0 || e.Temporary() || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %#v", err)
	}
}

func TestBackoffBounds(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	for n := 1; n <= 64; n++ {
		d := min(time.Second, 100*time.Millisecond<<min(n-1, 20))
		for i := 0; i < 50; i++ {
			if w := p.backoff(n); w < d/2 || w > d {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, w, d/2, d)
			}
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"2": 2 * time.Second, " 1 ": time.Second, "0": 0, "-3": 0, "": 0, "soon": 0, "1.5": 0,
		"Sun, 01 Mar 2026 10:00:30 GMT": 30 * time.Second, "Sun, 01 Mar 2026 09:00:00 GMT": 0,
		"99999999999": 24 * time.Hour,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}
