package cards_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
)

// TestMerchantOfGroupsMissesIntoOneLookup holds the first lookup at its
// statement, sends more misses meanwhile (cards of two merchants, and one
// that does not exist), and checks that they were all read by one second
// lookup, each answered with its own merchant. With one statement per
// miss, as before, the second lookup would be several of size one.
func TestMerchantOfGroupsMissesIntoOneLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	a, b := newMerchant(t, l, "USD"), newMerchant(t, l, "USD")
	deposit(t, l, a.ID, "USD", 1_000_00)
	deposit(t, l, b.ID, "USD", 1_000_00)
	want := map[string]int64{}
	for i := 0; i < 6; i++ {
		m := a
		if i%2 == 1 {
			m = b
		}
		c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want[c.CardNo] = m.ID
	}
	// A fresh service: its cache is empty (creation does not fill it).
	svc := cards.New(l.Ledger, l.FX, l.Merchants)
	var mu sync.Mutex
	var sizes []int
	first, release := make(chan struct{}), make(chan struct{})
	cards.SetBeforeOwnerLookup(svc, func(n int) {
		mu.Lock()
		sizes = append(sizes, n)
		k := len(sizes)
		mu.Unlock()
		if k == 1 {
			close(first)
			<-release
		}
	})

	var cardNos []string
	for c := range want {
		cardNos = append(cardNos, c)
	}
	const unknown = "crd_doesnotexist"
	type answer struct {
		merchant int64
		found    bool
		err      error
	}
	answers := make(map[string]answer)
	var wg sync.WaitGroup
	lookup := func(c string) {
		defer wg.Done()
		m, found, err := svc.MerchantOf(ctx, c)
		mu.Lock()
		answers[c] = answer{m, found, err}
		mu.Unlock()
	}
	wg.Add(1)
	go lookup(cardNos[0])
	<-first // the first lookup is running and held
	for _, c := range append(cardNos[1:], unknown) {
		wg.Add(1)
		go lookup(c)
	}
	// Every later miss must be queued before the first lookup ends.
	for {
		if queued := cards.OwnerLookupsQueued(svc); queued == len(cardNos) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()

	if len(sizes) != 2 || sizes[0] != 1 || sizes[1] != len(cardNos) {
		t.Fatalf("lookup sizes %v, want [1 %d]", sizes, len(cardNos))
	}
	for c, m := range want {
		if got := answers[c]; got.err != nil || !got.found || got.merchant != m {
			t.Errorf("card %s: %+v, want merchant %d", c, got, m)
		}
	}
	if got := answers[unknown]; got.err != nil || got.found {
		t.Errorf("unknown card: %+v, want not found", got)
	}
	// Found cards are cached now: no lookup at all.
	before := len(sizes)
	if m, found, err := svc.MerchantOf(ctx, cardNos[0]); err != nil || !found || m != want[cardNos[0]] {
		t.Fatalf("cached: %d %v %v", m, found, err)
	}
	if len(sizes) != before {
		t.Fatalf("a cached card was looked up again")
	}
}

// TestMerchantOfGivesUpAtItsDeadline: a waiter whose request has ended
// returns its context's error at once, and the lookup still answers the
// others.
func TestMerchantOfGivesUpAtItsDeadline(t *testing.T) {
	t.Parallel()
	l := newLedger(t, ledger.Config{})
	svc := cards.New(l.Ledger, l.FX, l.Merchants)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cards.SetBeforeOwnerLookup(svc, func(int) { once.Do(func() { close(held); <-release }) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, _, err := svc.MerchantOf(ctx, "crd_x"); done <- err }()
	<-held
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	close(release)
	if _, found, err := svc.MerchantOf(context.Background(), "crd_y"); err != nil || found {
		t.Fatalf("after: found %v err %v", found, err)
	}
}
