package ledger_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The writer's cost per batch must not grow with the number of merchants in
// it (issue 20, docs/performance.md "One merchant against sixteen"): a batch
// of sixteen merchants' transfers sends the same statements in the same
// round trips as a batch of one merchant's, every table written by one
// statement for all of them. The rows differ, and must: each merchant has
// its own head (locked and advanced) and its own funding balance, which a
// single merchant's batch nets into one. The test logs both batches'
// statements with their rows, which is the evidence the performance notes
// cite.
func TestBatchStatementsDoNotGrowWithMerchants(t *testing.T) {
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
	// A generous window so that each wave of clients lands in one batch.
	l := newLedger(t, ledger.Config{Shards: 1, BatchWindow: 150 * time.Millisecond, BatchTrace: func(bt ledger.BatchTrace) {
		mu.Lock()
		if tracing {
			traces = append(traces, bt)
		}
		mu.Unlock()
	}})
	merchants := make([]int64, clients)
	for i := range merchants {
		m := newMerchant(t, l, "USD")
		deposit(t, l, m.ID, "USD", 1_000_00)
		merchants[i] = m.ID
		// The cards' accounts exist before the measured waves, so that
		// every measured batch writes the same tables.
		for c := 0; c < cardsPer; c++ {
			if _, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{
				move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), cardAvail(m.ID, "USD", fmt.Sprintf("crd_%d", c)), 1)}}); err != nil {
				t.Fatal(err)
			}
		}
	}

	mu.Lock()
	tracing = true
	mu.Unlock()
	// wave sends one transfer IN from each client at once, client i
	// for merchantOf(i), each with an idempotency key of its own, and
	// returns the batches it took.
	wave := func(name string, merchantOf func(i int) int64) []ledger.BatchTrace {
		mu.Lock()
		from := len(traces)
		mu.Unlock()
		var wg sync.WaitGroup
		errs := make([]error, clients)
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				m := merchantOf(i)
				_, errs[i] = l.Append(ctx, ledger.Batch{Merchant: m,
					Entries: []postings.Entry{move(m, postings.KindCardFund, fund(m, "USD"),
						cardAvail(m, "USD", fmt.Sprintf("crd_%d", i%cardsPer)), 1_00)},
					Idempotency: &ledger.Idempotency{Key: fmt.Sprintf("%s-%d", name, i)}})
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
		one = append(one, wave(fmt.Sprintf("one-%d", w), func(int) int64 { return merchants[0] })...)
		sixteen = append(sixteen, wave(fmt.Sprintf("sixteen-%d", w), func(i int) int64 { return merchants[i] })...)
	}

	// The comparison needs a batch of each shape; a machine too slow to
	// gather a wave into one batch fails here rather than passing on
	// nothing.
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
