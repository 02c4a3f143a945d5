package cards_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
)

// Transfers IN, the load of the bench's scenario S (issue 20): a batch of
// sixteen merchants' top-ups sends the same statements in the same round
// trips as a batch of one merchant's (docs/performance.md, "One merchant
// against sixteen"). What differs is rows: the heads, funding balances and
// daily card-load counters, one per merchant, which one merchant's batch
// nets into one each. The test logs both batches, statement by statement.
func TestTransferBatchStatementsDoNotGrowWithMerchants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		clients  = 16
		cardsPer = 4
	)
	var (
		mu      sync.Mutex
		tracing bool
		traces  []ledger.BatchTrace
	)
	l := newLedger(t, ledger.Config{Shards: 1, BatchWindow: 150 * time.Millisecond, BatchTrace: func(bt ledger.BatchTrace) {
		mu.Lock()
		if tracing {
			traces = append(traces, bt)
		}
		mu.Unlock()
	}})
	merchants := make([]int64, clients)
	cardsOf := make([][]string, clients)
	for i := range merchants {
		m := newMerchant(t, l, "USD")
		deposit(t, l, m.ID, "USD", 1_000_00)
		merchants[i] = m.ID
		for c := 0; c < cardsPer; c++ {
			card, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00}, nil)
			if err != nil {
				t.Fatal(err)
			}
			cardsOf[i] = append(cardsOf[i], card.CardNo)
		}
	}
	mu.Lock()
	tracing = true
	mu.Unlock()

	// wave sends one transfer IN of 1.00 from each client at once, client
	// i as merchant who(i), each with an idempotency key of its own.
	wave := func(name string, who func(i int) int) []ledger.BatchTrace {
		mu.Lock()
		from := len(traces)
		mu.Unlock()
		var wg sync.WaitGroup
		errs := make([]error, clients)
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				k := who(i)
				_, errs[i] = l.Cards.Transfer(ctx, merchants[k],
					cards.TransferInput{CardNo: cardsOf[k][i%cardsPer], Amount: 1_00, Currency: "USD", Direction: cards.DirectionIn},
					&ledger.Idempotency{Scope: ledger.ScopeShop, Key: fmt.Sprintf("%s-%d", name, i)})
			}(i)
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s, client %d: %v", name, i, err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]ledger.BatchTrace(nil), traces[from:]...)
	}
	var one, sixteen []ledger.BatchTrace
	for w := 0; w < 3; w++ {
		one = append(one, wave(fmt.Sprintf("one-%d", w), func(int) int { return 0 })...)
		sixteen = append(sixteen, wave(fmt.Sprintf("sixteen-%d", w), func(i int) int { return i })...)
	}

	biggest := func(bts []ledger.BatchTrace) ledger.BatchTrace {
		sort.Slice(bts, func(i, j int) bool { return bts[i].Commands > bts[j].Commands })
		return bts[0]
	}
	b1, b16 := biggest(one), biggest(sixteen)
	if b1.Merchants != 1 || b1.Commands < clients/2 {
		t.Fatalf("no batch of one merchant's transfers gathered %d commands: biggest %d commands of %d merchants",
			clients/2, b1.Commands, b1.Merchants)
	}
	if b16.Merchants < clients/2 {
		t.Fatalf("no batch mixed %d merchants: biggest %d commands of %d merchants", clients/2, b16.Commands, b16.Merchants)
	}
	t.Logf("one merchant's batch:\n%s", describeTrace(b1))
	t.Logf("sixteen merchants' batch:\n%s", describeTrace(b16))
	for _, bt := range append(one, sixteen...) {
		if bt.RoundTrips != b1.RoundTrips {
			t.Errorf("a batch of %d commands of %d merchants took %d round trips; one merchant's took %d",
				bt.Commands, bt.Merchants, bt.RoundTrips, b1.RoundTrips)
		}
		if got, want := statementTexts(bt), statementTexts(b1); got != want {
			t.Errorf("a batch of %d commands of %d merchants sent\n%s\none merchant's sent\n%s", bt.Commands, bt.Merchants, got, want)
		}
	}
	mustVerify(t, l)
}

func statementTexts(bt ledger.BatchTrace) string {
	var b strings.Builder
	for _, s := range bt.Statements {
		b.WriteString(s.SQL)
		b.WriteByte('\n')
	}
	return b.String()
}

func describeTrace(bt ledger.BatchTrace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %d commands, %d merchants, %d round trips, %d statements\n", bt.Commands, bt.Merchants, bt.RoundTrips, len(bt.Statements))
	for _, s := range bt.Statements {
		fmt.Fprintf(&b, "  %5d rows  %s\n", s.Rows, s.SQL)
	}
	return b.String()
}
