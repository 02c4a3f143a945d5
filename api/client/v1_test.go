package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The base URL is checked when the client is made.
func TestBaseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://gw.example.com:8443":       "https://gw.example.com:8443",
		"https://gw.example.com:8443/":      "https://gw.example.com:8443",
		"https://gw.example.com/paygate/":   "https://gw.example.com/paygate",
		"http://gw.example.com:8443":        "",
		"https://gw.example.com:8443/shop":  "",
		"https://gw.example.com:8443/shop/": "",
		"https://h/x/shop":                  "",
		"https://u:p@gw.example.com:8443":   "",
		"https://gw.example.com:8443?a=1":   "",
		"https://gw.example.com:8443#x":     "",
		"gw.example.com:8443":               "",
		"":                                  "",
		"mailto:x@y":                        "",
	} {
		c, err := New(Config{BaseURL: raw, ShopNo: "SH1", PublicKey: "pk"})
		switch {
		case want == "" && err == nil:
			t.Errorf("%q accepted", raw)
		case want != "" && err != nil:
			t.Errorf("%q: %v", raw, err)
		case want != "" && c.Caller().BaseURL != want:
			t.Errorf("%q: base %q, want %q", raw, c.Caller().BaseURL, want)
		}
	}
}

// A certificate the client does not trust ends the call at once: the same
// handshake would fail again.
func TestTLSVerificationIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	var attempts atomic.Int32
	c, err := New(Config{BaseURL: srv.URL, ShopNo: "SH1", PublicKey: "pk", HTTPClient: NewHTTPClient(nil, 2),
		OnAttempt: func(Attempt) { attempts.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	c.caller.sleep = func(context.Context, time.Duration) bool { return true }
	_, err = c.Account(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Temporary() || e.Attempts != 1 || attempts.Load() != 1 {
		t.Fatalf("untrusted certificate: %v (attempts %d), want one final attempt", err, attempts.Load())
	}
	if hits.Load() != 0 {
		t.Errorf("the handler ran %d times", hits.Load())
	}
}

// An unset required amount fails before sending, naming its field.
func TestUnsetDecimalNamesItsField(t *testing.T) {
	c, err := New(Config{BaseURL: "https://127.0.0.1:1", ShopNo: "SH1", PublicKey: "pk"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateCard(context.Background(), CreateCardRequest{BIN: "453201", Currency: "USD"})
	var e *Error
	if !errors.As(err, &e) || e.Field != "amount" || e.Attempts != 0 || e.Temporary() {
		t.Fatalf("%v: want a final error naming amount before any attempt", err)
	}
	if got := unsetDecimal(struct {
		Items []struct {
			A Decimal `json:"a"`
			B *Decimal
		} `json:"items"`
	}{Items: make([]struct {
		A Decimal `json:"a"`
		B *Decimal
	}, 2)}); got != "items[0].a" {
		t.Errorf("nested: %q", got)
	}
}

// The iterators walk every page and stop when told.
func TestIterators(t *testing.T) {
	const n = 1203
	var requests atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/shop/card/list", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		list := []map[string]string{}
		for i := (page - 1) * size; i < min(page*size, n); i++ {
			list = append(list, map[string]string{"cardNo": "crd_" + strconv.Itoa(i)})
		}
		writeData(w, map[string]any{"total": n, "list": list})
	})
	mux.HandleFunc("/shop/webhook/events", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		after := -1
		if s := r.URL.Query().Get("startingAfter"); s != "" {
			after, _ = strconv.Atoi(s[len("evt_"):])
		}
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		list := []map[string]string{}
		for i := after + 1; i < min(after+1+size, n); i++ {
			list = append(list, map[string]string{"eventId": "evt_" + strconv.Itoa(i)})
		}
		writeData(w, map[string]any{"total": n, "list": list})
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL, ShopNo: "SH1", PublicKey: "pk", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for card, err := range c.AllCards(ctx, CardListQuery{}) {
		if err != nil || card.CardNo != "crd_"+strconv.Itoa(i) {
			t.Fatalf("card %d: %v %v", i, card.CardNo, err)
		}
		i++
	}
	if i != n || requests.Load() != 3 {
		t.Errorf("cards: %d items in %d requests, want %d in 3", i, requests.Load(), n)
	}
	requests.Store(0)
	i = 0
	for ev, err := range c.AllWebhookEvents(ctx, WebhookEventsQuery{}) {
		if err != nil || ev.EventID != "evt_"+strconv.Itoa(i) {
			t.Fatalf("event %d: %v %v", i, ev.EventID, err)
		}
		i++
	}
	if i != n || requests.Load() != 3 {
		t.Errorf("events: %d items in %d requests, want %d in 3", i, requests.Load(), n)
	}
	requests.Store(0)
	for _, err := range c.AllCards(ctx, CardListQuery{}) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if requests.Load() != 1 {
		t.Errorf("a break sent %d requests, want 1", requests.Load())
	}
}

func writeData(w http.ResponseWriter, data any) {
	w.Header().Set("Content-Type", "application/json")
	// Maps, not the client's types: an unset Decimal does not encode.
	_ = json.NewEncoder(w).Encode(map[string]any{"code": 200, "message": "success", "data": data})
}

// Operations is the table the contract test holds equal to the document.
func TestOperations(t *testing.T) {
	ops := Operations()
	seen := map[string]bool{}
	for _, op := range ops {
		if op.ID == "" || op.Method == "" || op.Path == "" || seen[op.ID] {
			t.Errorf("operation %+v: empty or repeated", op)
		}
		seen[op.ID] = true
	}
	if len(ops) != len(shopOperationsTable) || !seen["createCard"] {
		t.Errorf("%d operations: %v", len(ops), ops)
	}
}
