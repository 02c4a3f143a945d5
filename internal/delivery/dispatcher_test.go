package delivery_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is a settable time shared by the ledger, the dispatcher, the
// sender and the receiver: no test sleeps through a backoff.
type clock struct{ t atomic.Pointer[time.Time] }

func newClock() *clock {
	c := &clock{}
	now := time.Now().UTC().Truncate(time.Second)
	c.t.Store(&now)
	return c
}
func (c *clock) Now() time.Time { return *c.t.Load() }
func (c *clock) Add(d time.Duration) {
	t := c.Now().Add(d)
	c.t.Store(&t)
}

// merchantReceiver is a merchant's endpoint built on the reference
// receiver, which can be made to fail.
type merchantReceiver struct {
	srv      *httptest.Server
	down     atomic.Bool
	mu       sync.Mutex
	received []receiver.Event
	counts   map[string]int // deliveries that reached onEvent, by event id
}

func newReceiver(t *testing.T, key string, c *clock) *merchantReceiver {
	r := &merchantReceiver{counts: map[string]int{}}
	// A fresh deduper per delivery count would hide duplicates; this test
	// counts what reaches the merchant's code, so dedupe stays off.
	h := receiver.Handler(key, receiver.Options{Now: c.Now, Deduper: noDedupe{}}, func(_ context.Context, e receiver.Event) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.received = append(r.received, e)
		r.counts[e.EventID]++
		return nil
	})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.down.Load() {
			http.Error(w, `{"code":503}`, http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

type noDedupe struct{}

func (noDedupe) Seen(context.Context, string) (bool, error) { return false, nil }
func (noDedupe) Mark(context.Context, string) error         { return nil }

func (r *merchantReceiver) events() []receiver.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receiver.Event(nil), r.received...)
}

type fixture struct {
	l     *gatewaytest.Gateway
	store *delivery.Store
	clock *clock
	m     *merchant.Merchant
	recv  *merchantReceiver
	send  *delivery.Sender
	// sealer is the data key's: a second Store on the same database (another
	// gateway instance) is built with it.
	sealer *merchant.Sealer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: newClock()}
	key := make([]byte, merchant.DataKeyBytes)
	_, _ = rand.Read(key)
	sealer, err := merchant.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	f.sealer = sealer
	f.l = gatewaytest.New(t, nil, gatewaytest.Options{Sealer: sealer, Ledger: ledger.Config{Now: f.clock.Now}})
	f.store = f.l.Deliveries
	ctx := context.Background()
	m, creds, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	f.recv = newReceiver(t, creds.PrivateKey, f.clock)
	if err := f.l.SetCallbackURL(ctx, m.ID, f.recv.srv.URL+"/hooks"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Deposit(ctx, m.ID, "USD", 1_000_00, nil); err != nil {
		t.Fatal(err)
	}
	// A long attempt time-out: no test here times an attempt out, and the
	// default 5 s could expire on a loaded machine; a timed-out delivery
	// waits for a backoff on the frozen clock and never arrives.
	f.send = delivery.NewSender(delivery.SenderOptions{Now: f.clock.Now, Timeout: time.Minute,
		Allow: delivery.AllowList{Prefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	return f
}

func (f *fixture) dispatcher(store delivery.Claimer) *delivery.Dispatcher {
	if store == nil {
		store = f.store
	}
	return delivery.NewDispatcher(store, f.send, delivery.DispatcherOptions{Now: f.clock.Now, Lease: 30 * time.Second})
}

func (f *fixture) card(t *testing.T, callbackURL string) *cards.Card {
	t.Helper()
	c, err := f.l.Cards.CreateCard(context.Background(), f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10_00, CallbackURL: callbackURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) deliveries(t *testing.T) map[string]delivery.DeliveryInfo {
	t.Helper()
	list, err := f.store.Deliveries(context.Background(), f.m.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]delivery.DeliveryInfo{}
	for _, d := range list {
		out[d.EventType] = d
	}
	return out
}

func round(t *testing.T, d *delivery.Dispatcher) int {
	t.Helper()
	n, err := d.Round(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A card-create callback reaches the receiver signed; the reference
// receiver verifies it, and the card-create event goes to the create
// request's URL while later card events go to the merchant's URL.
func TestDeliveryIsSignedAndVerified(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.card(t, f.recv.srv.URL+"/card-created")
	if _, err := f.l.Cards.FreezeCard(context.Background(), f.m.ID, c.CardNo, "test", nil); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(nil)
	round(t, d) // card.created; card.frozen waits for it (same card)
	round(t, d)
	got := f.recv.events()
	if len(got) != 2 || got[0].EventType != cards.EventCardCreated || got[1].EventType != cards.EventCardFrozen ||
		got[0].ShopNo != f.m.ShopNo || got[0].Sequence != 1 || got[1].Sequence != 2 {
		t.Fatalf("received %+v", got)
	}
	for _, info := range f.deliveries(t) {
		if info.Status != delivery.DeliveryDelivered || info.Attempts != 1 {
			t.Errorf("%s: %+v", info.EventType, info)
		}
	}
}

// A receiver that is down gets retries at growing delays and the event
// once it is back; later events of the same card wait in order.
func TestRetriesUntilTheReceiverIsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.recv.down.Store(true)
	c := f.card(t, f.recv.srv.URL)
	if _, err := f.l.Cards.FreezeCard(ctx, f.m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(nil)
	var delays []time.Duration
	for i := 0; i < 5; i++ {
		if n := round(t, d); n != 1 {
			t.Fatalf("round %d claimed %d deliveries, want only card.created (card.frozen waits)", i, n)
		}
		info := f.deliveries(t)[cards.EventCardCreated]
		if info.Status != delivery.DeliveryPending || info.Attempts != i+1 || info.LastStatus == nil || *info.LastStatus != 503 {
			t.Fatalf("after attempt %d: %+v", i+1, info)
		}
		delays = append(delays, info.NextAttemptAt.Sub(f.clock.Now()))
		if n := round(t, d); n != 0 {
			t.Fatalf("a delivery was sent again before its next attempt time")
		}
		f.clock.Add(delays[i])
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] <= delays[i-1] {
			t.Fatalf("delays do not grow: %v", delays)
		}
	}
	f.recv.down.Store(false)
	round(t, d)
	round(t, d)
	got := f.recv.events()
	if len(got) != 2 || got[0].EventType != cards.EventCardCreated || got[1].EventType != cards.EventCardFrozen {
		t.Fatalf("received %+v", got)
	}
}

// After 24 hours of failures the delivery is dead, and a replay sends it
// with the same event id.
func TestDeadLetterAndReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.recv.down.Store(true)
	f.card(t, f.recv.srv.URL)
	d := f.dispatcher(nil)
	for i := 0; i < 40; i++ {
		round(t, d)
		info := f.deliveries(t)[cards.EventCardCreated]
		if info.Status == delivery.DeliveryFailed {
			break
		}
		f.clock.Add(info.NextAttemptAt.Sub(f.clock.Now()))
	}
	info := f.deliveries(t)[cards.EventCardCreated]
	if info.Status != delivery.DeliveryFailed || info.Attempts < 10 {
		t.Fatalf("after 24 hours: %+v", info)
	}
	f.recv.down.Store(false)
	if n := round(t, d); n != 0 {
		t.Fatal("a dead delivery was sent")
	}
	if _, err := f.store.ReplayEvent(ctx, f.m.ID, info.EventID); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	got := f.recv.events()
	if len(got) != 1 || got[0].EventID != info.EventID {
		t.Fatalf("replay received %+v, want event %s", got, info.EventID)
	}
}

// lostRecord drops the first record of every delivery: as if the gateway
// crashed after sending and before recording the success.
type lostRecord struct {
	*delivery.Store
	mu   sync.Mutex
	seen map[int64]bool
}

func (s *lostRecord) RecordDeliveries(ctx context.Context, recs []delivery.DeliveryRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var kept []delivery.DeliveryRecord
	for _, r := range recs {
		if !s.seen[r.Delivery.EventSeq] {
			s.seen[r.Delivery.EventSeq] = true
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) < len(recs) {
		return errors.New("crashed before recording")
	}
	return s.Store.RecordDeliveries(ctx, kept)
}

// At-least-once: a crash between sending and recording the success sends
// the same event id again once the claim's lease runs out.
func TestCrashAfterSendRedeliversTheSameEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.card(t, f.recv.srv.URL)
	d := f.dispatcher(&lostRecord{Store: f.store, seen: map[int64]bool{}})
	if _, err := d.Round(context.Background()); err == nil {
		t.Fatal("the lost record was not reported")
	}
	if n := round(t, d); n != 0 {
		t.Fatal("claimed again within the lease")
	}
	f.clock.Add(31 * time.Second)
	round(t, d)
	got := f.recv.events()
	if len(got) != 2 || got[0].EventID != got[1].EventID {
		t.Fatalf("received %+v: want the same event twice", got)
	}
	if info := f.deliveries(t)[cards.EventCardCreated]; info.Status != delivery.DeliveryDelivered {
		t.Fatalf("%+v", info)
	}
}

// Two dispatchers on one database never send one attempt twice.
func TestTwoDispatchersShareTheWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const cards = 60
	for i := 0; i < cards; i++ {
		f.card(t, f.recv.srv.URL)
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := f.dispatcher(nil)
			for j := 0; j < 10; j++ {
				if _, err := d.Round(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	f.recv.mu.Lock()
	defer f.recv.mu.Unlock()
	if len(f.recv.counts) != cards {
		t.Fatalf("%d events received, want %d", len(f.recv.counts), cards)
	}
	for id, n := range f.recv.counts {
		if n != 1 {
			t.Errorf("event %s received %d times", id, n)
		}
	}
}

// A round records every outcome in one statement: acknowledged ones become
// DELIVERED, failed ones stay PENDING with the next attempt time; a record
// for an attempt that is no longer the delivery's (replayed meanwhile) is
// left alone.
func TestRoundRecordsEveryOutcomeTogether(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"code":503}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	for range 3 {
		f.card(t, f.recv.srv.URL+"/ok")
	}
	f.card(t, down.URL+"/down")
	if n := round(t, f.dispatcher(nil)); n != 4 {
		t.Fatalf("claimed %d deliveries, want 4", n)
	}
	list, err := f.store.Deliveries(ctx, f.m.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	delivered, pending := 0, 0
	for _, d := range list {
		switch {
		case d.Status == delivery.DeliveryDelivered && d.LastStatus != nil && *d.LastStatus == 200:
			delivered++
		case d.Status == delivery.DeliveryPending && d.Attempts == 1 && d.LastStatus != nil && *d.LastStatus == 503 &&
			d.NextAttemptAt != nil && d.NextAttemptAt.After(f.clock.Now()):
			pending++
		default:
			t.Errorf("unexpected delivery %+v", d)
		}
	}
	if delivered != 3 || pending != 1 {
		t.Fatalf("%d delivered and %d pending, want 3 and 1", delivered, pending)
	}

	// A stale record: the claim's attempt, then a replay resets the row.
	f.clock.Add(time.Hour)
	claimed, err := f.store.ClaimDeliveries(ctx, 10, 30*time.Second)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	if _, err := f.store.ReplayEvent(ctx, f.m.ID, claimed[0].EventID); err != nil {
		t.Fatal(err)
	}
	err = f.store.RecordDeliveries(ctx, []delivery.DeliveryRecord{{Delivery: &claimed[0], Outcome: delivery.DeliveryOutcome{OK: true, Status: 200}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range mustDeliveries(t, f) {
		if d.EventID == claimed[0].EventID && (d.Status != delivery.DeliveryPending || d.Attempts != 0) {
			t.Fatalf("a stale record changed the replayed delivery: %+v", d)
		}
	}
}

func mustDeliveries(t *testing.T, f *fixture) []delivery.DeliveryInfo {
	t.Helper()
	list, err := f.store.Deliveries(context.Background(), f.m.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return list
}
