package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
)

// callbackReceiver is the merchants' callback endpoint: it verifies each
// signature and counts deliveries per event_id and per (event_id,
// X-Timestamp), and how many attempts of one event were inside it at once.
// It always acknowledges, after a short pause that widens the window in
// which a second dispatcher could send the same event.
type callbackReceiver struct {
	mu         sync.Mutex
	keys       map[string]string // shopNo → private key
	byEvent    map[string]int
	byEventTS  map[string]int
	inside     map[string]int
	concurrent int // deliveries that found another attempt of their event inside
	badSign    int
	total      int
	hold       time.Duration
	srv        *http.Server
	url        string
}

func newCallbackReceiver(hold time.Duration) (*callbackReceiver, error) {
	r := &callbackReceiver{keys: map[string]string{}, byEvent: map[string]int{}, byEventTS: map[string]int{},
		inside: map[string]int{}, hold: hold}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "http://" + ln.Addr().String() + "/callbacks"
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *callbackReceiver) addKey(shopNo, priv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[shopNo] = priv
}

func (r *callbackReceiver) close() { _ = r.srv.Close() }

func (r *callbackReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	ts := req.Header.Get(receiver.HeaderTimestamp)
	var ev struct {
		EventID string `json:"event_id"`
		ShopNo  string `json:"shopNo"`
	}
	_ = json.Unmarshal(body, &ev)
	r.mu.Lock()
	priv := r.keys[ev.ShopNo]
	r.total++
	r.byEvent[ev.EventID]++
	r.byEventTS[ev.EventID+"@"+ts]++
	r.inside[ev.EventID]++
	if r.inside[ev.EventID] > 1 {
		r.concurrent++
	}
	r.mu.Unlock()
	if err := receiver.Verify(body, ts, req.Header.Get(receiver.HeaderSign), priv, time.Now(), 0); err != nil {
		r.mu.Lock()
		r.badSign++
		r.mu.Unlock()
	}
	time.Sleep(r.hold)
	r.mu.Lock()
	r.inside[ev.EventID]--
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"code":200,"message":"ok"}`))
}

type receiverStats struct {
	total, events, twiceSameTS, redelivered, concurrent, badSign int
}

func (r *callbackReceiver) stats() receiverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := receiverStats{total: r.total, events: len(r.byEvent), concurrent: r.concurrent, badSign: r.badSign}
	for _, n := range r.byEventTS {
		if n > 1 {
			s.twiceSameTS++
		}
	}
	for _, n := range r.byEvent {
		if n > 1 {
			s.redelivered++
		}
	}
	return s
}
