package ledger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/testseed"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// TestPropertyConcurrentOperations runs thousands of random operations from
// concurrent callers over several merchants and currencies — deposits, card
// funding, transfers both ways, holds and their releases, some of them
// overdrawing — and then checks, independently of Verify as well as with
// it, that: every balance equals the sum of the successful operations (a
// model kept by the test), the balances of each currency sum to zero, no
// constrained balance is below zero, every merchant sequence runs 1..n and
// every hash chain holds.
func TestPropertyConcurrentOperations(t *testing.T) {
	t.Parallel()
	seed := testseed.Seed(t, "./ledger", "ledger.seed", 0)
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})

	currencies := []string{"USD", "EUR", "JPY"}
	const (
		merchantsN = 4
		cardsN     = 6
		workers    = 8
		opsPer     = 400
	)
	var merchants []int64
	for i := 0; i < merchantsN; i++ {
		merchants = append(merchants, newMerchant(t, l, currencies...).ID)
	}

	var mu sync.Mutex
	model := map[string]int64{} // address → expected balance
	okOps, failedOps := 0, 0
	apply := func(e postings.Entry) {
		for _, p := range e.Postings {
			model[p.Source.Address()] -= p.Amount
			model[p.Destination.Address()] += p.Amount
		}
	}

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < opsPer; i++ {
				m := merchants[rng.IntN(len(merchants))]
				cur := currencies[rng.IntN(len(currencies))]
				card := fmt.Sprintf("crd_%d_%s_%d", m, cur, rng.IntN(cardsN))
				amount := int64(1 + rng.IntN(5_000))
				var entries []postings.Entry
				switch op := rng.IntN(6); op {
				case 0:
					entries = []postings.Entry{move(m, postings.KindDeposit, postings.MerchantAccount(m, postings.AccountWorld, cur), fund(m, cur), amount*3)}
				case 1:
					entries = []postings.Entry{move(m, postings.KindCardTransferIn, fund(m, cur), cardAvail(m, cur, card), amount)}
				case 2:
					entries = []postings.Entry{move(m, postings.KindCardTransferOut, cardAvail(m, cur, card), fund(m, cur), amount)}
				case 3:
					entries = []postings.Entry{move(m, postings.KindCardAuth, cardAvail(m, cur, card), cardHeld(m, cur, card), amount)}
				case 4:
					entries = []postings.Entry{move(m, postings.KindCardAuthRelease, cardHeld(m, cur, card), cardAvail(m, cur, card), amount)}
				case 5: // a two-entry batch: fund and hold at once
					entries = []postings.Entry{
						move(m, postings.KindCardFund, fund(m, cur), cardAvail(m, cur, card), amount),
						move(m, postings.KindCardAuth, cardAvail(m, cur, card), cardHeld(m, cur, card), amount/2+1),
					}
				}
				_, err := l.Append(ctx, ledger.Batch{Merchant: m, Entries: entries})
				mu.Lock()
				switch {
				case err == nil:
					okOps++
					for _, e := range entries {
						apply(e)
					}
				case postings.ErrorCode(err) == postings.EINSUFFICIENT:
					failedOps++
				default:
					mu.Unlock()
					t.Errorf("worker %d op %d: unexpected error %v", w, i, err)
					return
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	t.Logf("%d operations committed, %d refused for insufficient funds", okOps, failedOps)
	if okOps < workers*opsPer/4 || failedOps == 0 {
		t.Fatalf("the workload is not exercising both outcomes: %d ok, %d refused", okOps, failedOps)
	}

	// 1. Balances equal the model.
	for _, m := range merchants {
		bals, err := audit.New(l).Balances(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bals {
			if want := model[b.Account.Address()]; b.Balance != want {
				t.Errorf("%s: balance %d, the model says %d", b.Account.Address(), b.Balance, want)
			}
			delete(model, b.Account.Address())
		}
	}
	for addr, v := range model {
		if v != 0 {
			t.Errorf("%s: the model has %d but the ledger has no such account", addr, v)
		}
	}

	// 2. Independent SQL checks.
	db := l.DB()
	var n int
	checks := map[string]string{
		"balances per merchant and currency sum to zero": `
			select count(*) from (select 1 from balances group by merchant_id, currency having sum(balance) <> 0) x`,
		"no constrained balance below zero": `
			select count(*) from balances b join accounts a on a.id = b.account_id
			where b.balance < 0 and a.type in ('funding', 'card_available', 'card_held')`,
		"balances equal the fold of postings": `
			select count(*) from balances b
			where b.balance <> coalesce((select sum(amount) from postings where destination_id = b.account_id), 0)
			                 - coalesce((select sum(amount) from postings where source_id = b.account_id), 0)`,
		"merchant sequences run 1..n": `
			select count(*) from (select merchant_id from entries group by merchant_id
			                      having min(merchant_seq) <> 1 or max(merchant_seq) <> count(*)) x`,
		"every hash chains to the previous one": `
			select count(*) from entries e
			left join entries p on p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq - 1
			where e.prev_hash <> coalesce(p.hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea)
			   or e.hash <> sha256(e.prev_hash || entry_canonical(e.merchant_id, e.merchant_seq))`,
	}
	for name, q := range checks {
		if err := db.NewRaw(q).Scan(ctx, &n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n != 0 {
			t.Errorf("%s: %d violations", name, n)
		}
	}

	// 3. And Verify agrees.
	rep := mustVerify(t, l)
	if rep.Entries < int64(okOps) {
		t.Errorf("Verify checked %d entries, at least %d were committed", rep.Entries, okOps)
	}
}
