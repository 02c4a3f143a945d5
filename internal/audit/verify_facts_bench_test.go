package audit_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// BenchmarkVerifyFacts measures audit verify's rate on a journal of
// GATEWAY_BENCH_VERIFY_ENTRIES entries (200,000 unless set) where every
// other entry carries a conversion's facts, each re-derived (apd
// arithmetic) and checked against its rate version: the worst case of the
// facts checks, against the bench's ≥ 100,000 entries/s (make bench row 7).
// It reports entries/s; run it alone on a quiet database:
//
//	./bin/gateway devdb -- go test ./internal/audit/ -run '^$' -bench VerifyFacts -benchtime 3x
func BenchmarkVerifyFacts(b *testing.B) {
	total := 200_000
	if s := os.Getenv("GATEWAY_BENCH_VERIFY_ENTRIES"); s != "" {
		var err error
		if total, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	// GATEWAY_BENCH_VERIFY_FACTS=0: the same journal without facts, the
	// figure to compare with.
	withFacts := os.Getenv("GATEWAY_BENCH_VERIFY_FACTS") != "0"
	ctx := context.Background()
	g := gatewaytest.New(b, nil, gatewaytest.Options{})
	m := newMerchant(b, g.Ledger, "USD")
	rate, err := g.FX.Set(ctx, "EUR", "USD", "1.0873", 25)
	if err != nil {
		b.Fatal(err)
	}
	fx, err := postings.NewFXFact(12_34, postings.MustCurrency("EUR"), postings.MustCurrency("USD"), rate.Mid, rate.SpreadBps,
		rate.Version, rate.UpdatedAt, postings.RoundDown)
	if err != nil {
		b.Fatal(err)
	}
	facts := postings.PutFacts(nil, &fx, nil)
	world, funding := postings.MerchantAccount(m.ID, postings.AccountWorld, "USD"), fund(m.ID, "USD")
	batches := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range batches {
				entries := make([]postings.Entry, n)
				for i := range entries {
					entries[i] = postings.Entry{Merchant: m.ID, Kind: postings.KindDeposit,
						Postings: []postings.Posting{{Source: world, Destination: funding, Amount: 1, Currency: "USD"}}}
					if i%2 == 0 && withFacts {
						entries[i].Kind, entries[i].Metadata = postings.KindFX, facts
					}
				}
				if _, err := g.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: entries}); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		}()
	}
	for left := total; left > 0; left -= ledger.BatchEntriesMax {
		batches <- min(left, ledger.BatchEntriesMax)
	}
	close(batches)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	svc := audit.New(g.Ledger)
	b.ResetTimer()
	var took time.Duration
	var entries int64
	for range b.N {
		t0 := time.Now()
		rep, err := svc.Verify(ctx, audit.VerifyOptions{})
		took += time.Since(t0)
		if err != nil || !rep.OK() {
			b.Fatalf("verify: %v, %v", err, rep.Problems)
		}
		entries += rep.Entries
	}
	b.ReportMetric(float64(entries)/took.Seconds(), "entries/s")
}
