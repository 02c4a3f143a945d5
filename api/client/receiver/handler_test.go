package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type recorded struct {
	mu     sync.Mutex
	events []Event
	fail   atomic.Bool
}

func (r *recorded) onEvent(_ context.Context, e Event) error {
	if r.fail.Load() {
		return errors.New("merchant database down")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

func (r *recorded) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// post sends one callback to a real local server.
func post(t *testing.T, url string, body []byte, ts, sign string) (int, string) {
	t.Helper()
	status, got, err := postE(url, body, ts, sign)
	if err != nil {
		t.Fatal(err)
	}
	return status, got
}

func postE(url string, body []byte, ts, sign string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if ts != "" {
		req.Header.Set(HeaderTimestamp, ts)
	}
	if sign != "" {
		req.Header.Set(HeaderSign, sign)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

func eventBody(id string) []byte {
	return []byte(fmt.Sprintf(`{"event_id":%q,"event_type":"remittance.status","created_at":"2025-01-15T09:30:00Z","shopNo":"SH1234567890","sequence":7,"data":{"txId":"rmt_1","status":"SETTLED","previousStatus":"IN_FLIGHT"}}`, id))
}

func TestHandler(t *testing.T) {
	rec := &recorded{}
	srv := httptest.NewServer(Handler(testKey, Options{Now: func() time.Time { return testNow }, BodyBytesMax: 4096}, rec.onEvent))
	defer srv.Close()

	signed := func(body []byte) (string, string) { return testTS, Sign(body, testTS, testKey) }
	body := eventBody("evt_ok")
	ts, sign := signed(body)
	staleTS := "1736933000" // 400 s before now
	big := []byte(`{"event_id":"evt_big","event_type":"card.created","data":"` + strings.Repeat("x", 5000) + `"}`)
	notJSON := []byte(`{"event_id":"evt_x",`)
	trailing := append(eventBody("evt_trailing"), []byte(` {}`)...)
	noID := []byte(`{"event_type":"card.created","data":{}}`)

	for _, c := range []struct {
		name       string
		body       []byte
		ts, sign   string
		wantStatus int
		wantBody   string
		wantEvents int // events recorded after the request
	}{
		{"valid", body, ts, sign, 200, `{"code":200,"message":"ok"}`, 1},
		{"duplicate", body, ts, sign, 200, `{"code":200,"message":"duplicate"}`, 1},
		{"duplicate, re-signed later", body, "1736933460", Sign(body, "1736933460", testKey), 200, `{"code":200,"message":"duplicate"}`, 1},
		{"uppercase sign", eventBody("evt_upper"), ts, strings.ToUpper(Sign(eventBody("evt_upper"), ts, testKey)), 200, `{"code":200,"message":"ok"}`, 2},
		{"bad signature", eventBody("evt_bad"), ts, sign, 401, `{"code":401,"message":"bad signature"}`, 2},
		{"wrong key", eventBody("evt_key"), ts, Sign(eventBody("evt_key"), ts, testKey+"x"), 401, `{"code":401,"message":"bad signature"}`, 2},
		{"stale", eventBody("evt_stale"), staleTS, Sign(eventBody("evt_stale"), staleTS, testKey), 401, `{"code":401,"message":"stale timestamp"}`, 2},
		{"not unix seconds", eventBody("evt_ms"), ts + "000", Sign(eventBody("evt_ms"), ts+"000", testKey), 401, `{"code":401,"message":"stale timestamp"}`, 2},
		{"no sign", eventBody("evt_ns"), ts, "", 400, `{"code":400,"message":"missing X-Sign or X-Timestamp"}`, 2},
		{"no timestamp", eventBody("evt_nt"), "", sign, 400, `{"code":400,"message":"missing X-Sign or X-Timestamp"}`, 2},
		{"too large", big, ts, Sign(big, ts, testKey), 413, `{"code":413,"message":"body too large"}`, 2},
		{"signed, not JSON", notJSON, ts, Sign(notJSON, ts, testKey), 400, `{"code":400,"message":"bad payload"}`, 2},
		{"signed, trailing data", trailing, ts, Sign(trailing, ts, testKey), 400, `{"code":400,"message":"bad payload"}`, 2},
		{"signed, no event_id", noID, ts, Sign(noID, ts, testKey), 400, `{"code":400,"message":"bad payload"}`, 2},
	} {
		status, got := post(t, srv.URL, c.body, c.ts, c.sign)
		if status != c.wantStatus || got != c.wantBody {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, got, c.wantStatus, c.wantBody)
		}
		if n := rec.count(); n != c.wantEvents {
			t.Errorf("%s: %d events recorded, want %d", c.name, n, c.wantEvents)
		}
	}
	e := rec.events[0]
	if e.EventID != "evt_ok" || e.EventType != "remittance.status" || e.ShopNo != "SH1234567890" || e.Sequence != 7 ||
		!e.CreatedAt.Equal(time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)) {
		t.Errorf("event = %+v", e)
	}
	var data struct{ TxID, Status string }
	if err := json.Unmarshal(e.Data, &data); err != nil || data.TxID != "rmt_1" || data.Status != "SETTLED" {
		t.Errorf("data = %s (%v)", e.Data, err)
	}

	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
}

// onEvent failing answers 500 and does not record the id, so the retry is
// handled.
func TestHandlerRetryAfterFailure(t *testing.T) {
	rec := &recorded{}
	srv := httptest.NewServer(Handler(testKey, Options{Now: func() time.Time { return testNow }}, rec.onEvent))
	defer srv.Close()
	body := eventBody("evt_retry")
	sign := Sign(body, testTS, testKey)

	rec.fail.Store(true)
	if status, got := post(t, srv.URL, body, testTS, sign); status != 500 || got != `{"code":500,"message":"event not processed"}` {
		t.Fatalf("failing onEvent: %d %s", status, got)
	}
	rec.fail.Store(false)
	if status, got := post(t, srv.URL, body, testTS, sign); status != 200 || got != `{"code":200,"message":"ok"}` {
		t.Fatalf("retry: %d %s", status, got)
	}
	if status, got := post(t, srv.URL, body, testTS, sign); status != 200 || got != `{"code":200,"message":"duplicate"}` {
		t.Fatalf("second retry: %d %s", status, got)
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
}

// A delivery of an event whose onEvent is still running answers 409.
func TestHandlerInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	h := Handler(testKey, Options{Now: func() time.Time { return testNow }}, func(ctx context.Context, e Event) error {
		if calls.Add(1) == 1 {
			close(started)
			<-release
		}
		return nil
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := eventBody("evt_slow")
	sign := Sign(body, testTS, testKey)

	first := make(chan int, 1)
	go func() {
		status, _, _ := postE(srv.URL, body, testTS, sign)
		first <- status
	}()
	<-started
	if status, got := post(t, srv.URL, body, testTS, sign); status != 409 || got != `{"code":409,"message":"in progress"}` {
		t.Errorf("concurrent duplicate: %d %s", status, got)
	}
	close(release)
	if status := <-first; status != 200 {
		t.Errorf("first: %d", status)
	}
	if status, got := post(t, srv.URL, body, testTS, sign); status != 200 || got != `{"code":200,"message":"duplicate"}` {
		t.Errorf("after: %d %s", status, got)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("onEvent called %d times", n)
	}
}

type failingDeduper struct{}

func (failingDeduper) Seen(context.Context, string) (bool, error) {
	return false, errors.New("redis down")
}
func (failingDeduper) Mark(context.Context, string) error { return nil }

func TestHandlerDeduperError(t *testing.T) {
	called := false
	h := Handler(testKey, Options{Now: func() time.Time { return testNow }, Deduper: failingDeduper{}}, func(context.Context, Event) error {
		called = true
		return nil
	})
	body := eventBody("evt_d")
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	req.Header.Set(HeaderTimestamp, testTS)
	req.Header.Set(HeaderSign, Sign(body, testTS, testKey))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 500 || called {
		t.Errorf("status %d, onEvent called %v", w.Code, called)
	}
}

func TestHandlerPanicsWithoutKey(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	Handler("", Options{}, func(context.Context, Event) error { return nil })
}

func TestMemoryDeduperLRU(t *testing.T) {
	ctx := context.Background()
	d := NewMemoryDeduper(3)
	for _, id := range []string{"a", "b", "c"} {
		if err := d.Mark(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if seen, _ := d.Seen(ctx, "a"); !seen { // a becomes the most recent
		t.Fatal("a not seen")
	}
	_ = d.Mark(ctx, "d") // evicts b, the least recently used
	for id, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true, "e": false} {
		if seen, _ := d.Seen(ctx, id); seen != want {
			t.Errorf("Seen(%s) = %v, want %v", id, seen, want)
		}
	}
	if d.Len() != 3 {
		t.Errorf("Len = %d", d.Len())
	}
	if NewMemoryDeduper(0).size != DefaultDedupeSize {
		t.Error("default size")
	}
}
