package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
)

const testKey = "sk_test_0123456789abcdefghijklmnopqrstuv"

var (
	testBody = []byte(`{"event_id":"evt_abc","event_type":"card.created","created_at":"2025-01-15T09:30:00Z","shopNo":"SH1234567890","sequence":1,"data":{"cardNo":"crd_1","status":"ACTIVE"}}`)
	testNow  = time.Unix(1736933400, 0)
	// httptest servers listen on loopback: tests of success allow it.
	allowLoopback = AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
)

// checkRequest is what every receiver in these tests asserts about a
// delivery; it returns "" when the request is a correct signed callback.
func checkRequest(r *http.Request, wantTS string) string {
	body, err := io.ReadAll(r.Body)
	switch {
	case err != nil:
		return err.Error()
	case r.Method != http.MethodPost:
		return "method " + r.Method
	case r.Header.Get("Content-Type") != "application/json":
		return "content type " + r.Header.Get("Content-Type")
	case r.Header.Get("User-Agent") != UserAgent:
		return "user agent " + r.Header.Get("User-Agent")
	case wantTS != "" && r.Header.Get("X-Timestamp") != wantTS:
		return "timestamp " + r.Header.Get("X-Timestamp")
	case string(body) != string(testBody):
		return "body changed"
	}
	ts, _ := receiver.ParseTimestamp(r.Header.Get("X-Timestamp"))
	if err := receiver.Verify(body, r.Header.Get("X-Timestamp"), r.Header.Get("X-Sign"), testKey, ts, 0); err != nil {
		return err.Error()
	}
	return ""
}

func newTestSender(allow AllowList, timeout time.Duration) *Sender {
	return NewSender(SenderOptions{Allow: allow, Timeout: timeout, Now: func() time.Time { return testNow }})
}

func TestSendClassification(t *testing.T) {
	var redirectTargetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirectTargetHits.Add(1)
		fmt.Fprint(w, `{"code":200}`)
	}))
	defer target.Close()
	release := make(chan struct{})
	defer close(release)

	reply := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
	pad := func(n int) string { // a JSON object of exactly n bytes with code 200
		s := `{"code":200,"pad":""}`
		return `{"code":200,"pad":"` + strings.Repeat("x", n-len(s)) + `"}`
	}
	for _, c := range []struct {
		name       string
		handler    http.HandlerFunc
		ok         bool
		status     int
		errContain string
	}{
		{"200 code 200", reply(200, `{"code":200,"message":"ok"}`), true, 200, ""},
		{"200 code \"200\"", reply(200, `{"code":"200"}`), true, 200, ""},
		{"200 code 200.0", reply(200, `{"code":200.0,"data":null}`), true, 200, ""},
		{"200 code 200, newline", reply(200, "{\"code\":200}\n"), true, 200, ""},
		{"200 answer at the bound", reply(200, pad(DefaultResponseBytesMax)), true, 200, ""},
		{"200 code 500", reply(200, `{"code":500,"message":"db down"}`), false, 200, `code 500: db down`},
		{"200 code \"500\"", reply(200, `{"code":"500"}`), false, 200, `code "500"`},
		{"200 code 999", reply(200, `{"code":999,"message":"failed","data":null}`), false, 200, "code 999"},
		{"200 code 200 as text \" 200\"", reply(200, `{"code":" 200"}`), false, 200, "code"},
		{"200 code true", reply(200, `{"code":true}`), false, 200, "code true"},
		{"200 no code", reply(200, `{"message":"ok"}`), false, 200, "no code"},
		{"200 not JSON", reply(200, `OK`), false, 200, "not a JSON object"},
		{"200 empty", reply(200, ``), false, 200, "not a JSON object"},
		{"200 array", reply(200, `[200]`), false, 200, "not a JSON object"},
		{"200 null", reply(200, `null`), false, 200, "no code"},
		{"200 trailing garbage", reply(200, `{"code":200} x`), false, 200, "not a JSON object"},
		{"200 answer over the bound", reply(200, pad(DefaultResponseBytesMax+1)), false, 200, "larger than 65536 bytes"},
		{"201", reply(201, `{"code":200}`), false, 201, "HTTP 201"},
		{"204", reply(204, ``), false, 204, "HTTP 204"},
		{"400", reply(400, `{"code":400}`), false, 400, "HTTP 400"},
		{"401 (receiver refused the signature)", reply(401, `{"code":401,"message":"bad signature"}`), false, 401, "HTTP 401"},
		{"500", reply(500, `{"code":500}`), false, 500, "HTTP 500"},
		{"503", reply(503, ``), false, 503, "HTTP 503"},
		{"302 not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusFound)
		}, false, 302, "HTTP 302 (redirects are not followed)"},
		{"307 not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		}, false, 307, "HTTP 307"},
		{"slow answer", func(w http.ResponseWriter, r *http.Request) {
			select { // never answers within the time-out
			case <-release:
			case <-r.Context().Done():
			}
		}, false, 0, "timed out after 150ms"},
		{"slow body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			fmt.Fprint(w, `{"code":`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, false, 200, "timed out after 150ms"},
		{"connection dropped", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, false, 0, "connection closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var problem atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if p := checkRequest(r, "1736933400"); p != "" {
					problem.Store(p)
				}
				c.handler(w, r)
			}))
			defer srv.Close()
			// Only the two slow cases wait out the time-out; the others get
			// a long one, so a loaded machine (CI runs every package at
			// once, under -race) cannot turn an answer into a time-out.
			timeout := 10 * time.Second
			if strings.Contains(c.errContain, "timed out") {
				timeout = 150 * time.Millisecond
			}
			s := newTestSender(allowLoopback, timeout)
			defer s.CloseIdleConnections()
			res := s.Send(context.Background(), srv.URL+"/cb?token=secret-token", testBody, testKey)
			if p := problem.Load(); p != nil {
				t.Errorf("request: %v", p)
			}
			if res.OK != c.ok || res.Status != c.status || !strings.Contains(res.Error, c.errContain) || (c.ok && res.Error != "") {
				t.Errorf("Result = %+v; want OK=%v Status=%d Error containing %q", res, c.ok, c.status, c.errContain)
			}
			if strings.Contains(res.Error, "secret-token") || strings.Contains(res.Error, testKey) || len(res.Error) > 200 {
				t.Errorf("Error shows too much: %q", res.Error)
			}
			if res.Duration <= 0 {
				t.Errorf("Duration = %v", res.Duration)
			}
		})
	}
	if n := redirectTargetHits.Load(); n != 0 {
		t.Errorf("redirect target reached %d times", n)
	}
}

func TestSendDefaults(t *testing.T) {
	s := NewSender(SenderOptions{})
	if s.timeout != 5*time.Second || s.bodyMax != 64<<10 || s.now == nil {
		t.Errorf("defaults: timeout %v, body %d", s.timeout, s.bodyMax)
	}
	tr := s.client.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport uses a proxy")
	}
}

// Every attempt is signed afresh with the clock's time; the body is the same.
func TestSendSignsEachAttemptAfresh(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := checkRequest(r, ""); p != "" {
			t.Errorf("request: %s", p)
		}
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Timestamp")+" "+r.Header.Get("X-Sign"))
		mu.Unlock()
		w.WriteHeader(503)
	}))
	defer srv.Close()
	now := testNow
	s := NewSender(SenderOptions{Allow: allowLoopback, Timeout: 10 * time.Second, Now: func() time.Time { return now }})
	for _, d := range []time.Duration{0, 5 * time.Second, 35 * time.Second} {
		now = testNow.Add(d)
		if res := s.Send(context.Background(), srv.URL, testBody, testKey); res.OK || res.Status != 503 {
			t.Fatalf("Result %+v", res)
		}
	}
	if len(seen) != 3 || seen[0] == seen[1] || seen[1] == seen[2] ||
		!strings.HasPrefix(seen[0], "1736933400 ") || !strings.HasPrefix(seen[1], "1736933405 ") || !strings.HasPrefix(seen[2], "1736933435 ") {
		t.Errorf("attempts: %q", seen)
	}
}

// Real deliveries to the reference receiver.
func TestSendToReferenceReceiver(t *testing.T) {
	var events atomic.Int32
	var failing atomic.Bool
	receiverNow := testNow
	h := receiver.Handler(testKey, receiver.Options{Now: func() time.Time { return receiverNow }}, func(ctx context.Context, e receiver.Event) error {
		if failing.Load() {
			return errors.New("merchant database down")
		}
		if e.EventID != "evt_abc" || e.EventType != "card.created" || e.Sequence != 1 {
			t.Errorf("event %+v", e)
		}
		events.Add(1)
		return nil
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	s := newTestSender(allowLoopback, 10*time.Second)

	failing.Store(true)
	if res := s.Send(context.Background(), srv.URL, testBody, testKey); res.OK || res.Status != 500 {
		t.Errorf("onEvent failing: %+v", res)
	}
	failing.Store(false)
	if res := s.Send(context.Background(), srv.URL, testBody, testKey); !res.OK || res.Status != 200 {
		t.Errorf("delivery: %+v", res)
	}
	if res := s.Send(context.Background(), srv.URL, testBody, testKey); !res.OK {
		t.Errorf("redelivery (duplicate) must be acknowledged: %+v", res)
	}
	if res := s.Send(context.Background(), srv.URL, testBody, testKey+"x"); res.OK || res.Status != 401 {
		t.Errorf("wrong key: %+v", res)
	}
	receiverNow = testNow.Add(10 * time.Minute)
	if res := s.Send(context.Background(), srv.URL, testBody, testKey); res.OK || res.Status != 401 {
		t.Errorf("clock 10 min apart: %+v", res)
	}
	if n := events.Load(); n != 1 {
		t.Errorf("onEvent succeeded %d times, want 1", n)
	}
}

// The dialer refuses loopback unless allowed, and the target never sees a
// request.
func TestSendRefusesLoopbackUnlessAllowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"code":200}`)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	for _, c := range []struct {
		name  string
		allow AllowList
		url   string
		ok    bool
	}{
		{"no allow list", AllowList{}, srv.URL, false},
		{"localhost by name", AllowList{}, "http://localhost:" + port + "/", false},
		{"other prefix only", AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, srv.URL, false},
		{"allow list", allowLoopback, srv.URL, true},
		{"AllowPrivate", AllowList{AllowPrivate: true}, srv.URL, true},
	} {
		res := newTestSender(c.allow, 10*time.Second).Send(context.Background(), c.url, testBody, testKey)
		if res.OK != c.ok {
			t.Errorf("%s: %+v", c.name, res)
		}
		if !c.ok && !strings.Contains(res.Error, "loopback") {
			t.Errorf("%s: Error %q does not name the reason", c.name, res.Error)
		}
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server hit %d times, want 2", n)
	}

	// At connect time: the transport itself refuses, without ValidateURL
	// in front (as for a name that resolves to loopback).
	s := newTestSender(AllowList{}, 10*time.Second)
	resp, err := s.client.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
	}
	var blocked *BlockedAddressError
	if !errors.As(err, &blocked) || blocked.Reason != "loopback" {
		t.Errorf("transport: err = %v, want a loopback refusal", err)
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server hit %d times, want 2", n)
	}
}

// A public-looking host name passes ValidateURL and is judged after
// resolution, on every answer: one that resolves to loopback (the DNS
// rebinding case), or to an allowed address and a refused one in either
// order, is refused before any connection; the development allow list
// still reaches a loopback receiver by name. The resolver is the test's
// (no DNS); every address is loopback: 127.0.0.1 (the receiver, allowed
// by a prefix where said) and 127.0.0.2 (never allowed).
func TestSendJudgesEveryResolvedAddress(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"code":200}`)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	url := "http://callbacks.shop-test.com:" + port + "/cb"
	if err := ValidateURL(url, AllowList{}); err != nil {
		t.Fatalf("ValidateURL(%s): %v", url, err)
	}
	one := AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	recv, other := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	for _, c := range []struct {
		name   string
		allow  AllowList
		answer []netip.Addr
		reason string // "" = delivered
	}{
		{"resolves to loopback", AllowList{}, []netip.Addr{recv}, "127.0.0.1: loopback"},
		{"allowed, then refused", one, []netip.Addr{recv, other}, "127.0.0.2: loopback"},
		{"refused, then allowed", one, []netip.Addr{other, recv}, "127.0.0.2: loopback"},
		{"NAT64 form of loopback", AllowList{}, []netip.Addr{netip.MustParseAddr("64:ff9b::7f00:1")}, "of 127.0.0.1, loopback"},
		{"allowed alone", one, []netip.Addr{recv}, ""},
		{"development allow list", AllowList{AllowPrivate: true}, []netip.Addr{recv}, ""},
	} {
		before := hits.Load()
		answer := c.answer
		s := NewSender(SenderOptions{Allow: c.allow, Timeout: 10 * time.Second, Now: func() time.Time { return testNow },
			lookup: func(context.Context, string) ([]netip.Addr, error) { return answer, nil }})
		res := s.Send(context.Background(), url, testBody, testKey)
		delivered := hits.Load() - before
		if c.reason == "" && (!res.OK || delivered != 1) {
			t.Errorf("%s: %+v, %d requests", c.name, res, delivered)
		}
		if c.reason != "" && (res.OK || !strings.Contains(res.Error, c.reason) || delivered != 0) {
			t.Errorf("%s: %+v, %d requests; want refused naming %q", c.name, res, delivered, c.reason)
		}
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	s := newTestSender(allowLoopback, 10*time.Second)
	for _, c := range []struct{ url, key, want string }{
		{"ftp://merchant.example/", testKey, "scheme http or https"},
		{"https://user:pw@merchant.example/", testKey, "user info"},
		{"http://127.0.0.1:1/", "", "no private key"},
	} {
		if res := s.Send(context.Background(), c.url, testBody, c.key); res.OK || !strings.Contains(res.Error, c.want) || strings.Contains(res.Error, "pw") {
			t.Errorf("%s: %+v", c.url, res)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if res := s.Send(ctx, srv.URL, testBody, testKey); res.OK || res.Error != "cancelled" {
		t.Errorf("cancelled context: %+v", res)
	}
}

// https targets work with the Sender's TLS settings.
func TestSendTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := checkRequest(r, "1736933400"); p != "" {
			t.Errorf("request: %s", p)
		}
		fmt.Fprint(w, `{"code":200}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	defer srv.Close()
	trusted := NewSender(SenderOptions{Allow: allowLoopback, Now: func() time.Time { return testNow },
		TLSConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if res := trusted.Send(context.Background(), srv.URL, testBody, testKey); !res.OK {
		t.Errorf("trusted: %+v", res)
	}
	untrusted := newTestSender(allowLoopback, 10*time.Second) // refused at once; long so load cannot make it a time-out
	if res := untrusted.Send(context.Background(), srv.URL, testBody, testKey); res.OK || !strings.Contains(res.Error, "TLS") {
		t.Errorf("untrusted certificate: %+v", res)
	}
}
