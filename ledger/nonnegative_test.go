package ledger_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/paygate/gateway/internal/testseed"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// constrainedTypes is docs/ledger.md's chart, column "constrained (never <
// 0)", written out here rather than read from postings so that a type
// losing (or gaining) its flag fails the test.
var constrainedTypes = map[postings.AccountType]bool{
	postings.AccountFunding:       true,
	postings.AccountCardAvailable: true,
	postings.AccountCardHeld:      true,
	postings.AccountRemitInFlight: true,
}

// TestNoPostingTakesAConstrainedAccountBelowZero is a property over random
// entries of one to three postings between accounts of every type: an entry
// is refused exactly when one of its postings, applied in order, would take
// a constrained account below zero — even when a later posting of the same
// entry would bring it back (docs/ledger.md, "Balances") — and then with
// EINSUFFICIENT naming that account's type, and nothing of it written;
// otherwise every balance moves as the test's model says, which may take an
// unconstrained account below zero. Amounts are drawn at the boundary (the
// whole balance, one minor unit more) as often as at random.
//
// The refusal must be the writer's own check at the posting (Tx.move), not
// the database CHECK behind it: that one answers without the reason, and
// lets a negative between two postings of one entry through.
func TestNoPostingTakesAConstrainedAccountBelowZero(t *testing.T) {
	t.Parallel()
	for _, typ := range postings.AccountTypes() {
		if typ.Constrained() != constrainedTypes[typ] {
			t.Errorf("%s: constrained %v, docs/ledger.md says %v", typ, typ.Constrained(), constrainedTypes[typ])
		}
	}
	seed := testseed.Seed(t, "./ledger", "ledger.seed", 0)
	rng := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD").ID

	var accounts []postings.Account
	for _, typ := range postings.AccountTypes() {
		if typ.PerCard() {
			accounts = append(accounts, postings.CardAccount(m, typ, "USD", "crd_nn1"), postings.CardAccount(m, typ, "USD", "crd_nn2"))
		} else {
			accounts = append(accounts, postings.MerchantAccount(m, typ, "USD"))
		}
	}
	model := map[postings.Account]int64{}
	checkAll := func(when string) {
		t.Helper()
		for _, a := range accounts {
			got, err := l.Balance(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if got != model[a] {
				t.Fatalf("%s: %s = %d, the model says %d (seed %d)", when, a.Address(), got, model[a], seed)
			}
		}
	}

	const ops = 300
	refused, belowZeroUnconstrained, dipped := 0, 0, 0
	for i := 0; i < ops; i++ {
		e := postings.Entry{Merchant: m, Kind: postings.KindAdjustment}
		for n := 1 + rng.IntN(3); n > 0; n-- {
			src := accounts[rng.IntN(len(accounts))]
			dst := accounts[rng.IntN(len(accounts))]
			// A card receivable is only ever paid from here: Verify holds
			// that it is never a credit, a domain's rule the writer leaves
			// to the domains, which the arbitrary entries here are not.
			for dst == src || dst.Type == postings.AccountCardReceivable {
				dst = accounts[rng.IntN(len(accounts))]
			}
			e.Postings = append(e.Postings, postings.Posting{Source: src, Destination: dst,
				Amount: drawAmount(rng, model[src]), Currency: "USD"})
		}
		if first := e.Postings[0]; rng.IntN(4) == 0 && first.Source.Type != postings.AccountWorld {
			// Refilled by a later posting of the same entry: a dip
			// between postings, which is refused all the same.
			e.Postings = append(e.Postings, postings.Posting{Source: postings.MerchantAccount(m, postings.AccountWorld, "USD"),
				Destination: first.Source, Amount: first.Amount, Currency: "USD"})
		}
		// The model, posting by posting.
		next := map[postings.Account]int64{}
		for a, b := range model {
			next[a] = b
		}
		var firstRefusal *postings.Account
		for _, p := range e.Postings {
			next[p.Source] -= p.Amount
			next[p.Destination] += p.Amount
			if next[p.Source] < 0 && firstRefusal == nil {
				if constrainedTypes[p.Source.Type] {
					src := p.Source
					firstRefusal = &src
				} else {
					belowZeroUnconstrained++
				}
			}
		}

		_, err := l.Append(ctx, ledger.Batch{Merchant: m, Entries: []postings.Entry{e}})
		if firstRefusal != nil {
			refused++
			if next[*firstRefusal] >= 0 {
				dipped++ // below zero between postings, not at the end
			}
			pe := postings.AsError(err)
			if err == nil || pe.Code != postings.EINSUFFICIENT || pe.Reason != postings.InsufficientReason(firstRefusal.Type) {
				t.Fatalf("op %d %+v takes %s below zero: got %v (reason %q), want EINSUFFICIENT %q (seed %d)",
					i, e.Postings, firstRefusal.Address(), err, pe.Reason, postings.InsufficientReason(firstRefusal.Type), seed)
			}
			checkAll("after a refused entry")
			continue
		}
		if err != nil {
			t.Fatalf("op %d %+v: %v, want it posted (seed %d)", i, e.Postings, err, seed)
		}
		model = next
		if i%25 == 0 {
			checkAll("after a posted entry")
		}
	}
	checkAll("at the end")
	// The draw reached every case it is about.
	if refused < ops/10 || belowZeroUnconstrained == 0 || dipped == 0 {
		t.Errorf("the draw is too tame: %d refused, %d unconstrained below zero, %d dips between postings (seed %d)",
			refused, belowZeroUnconstrained, dipped, seed)
	}
	mustVerify(t, l)
}

// drawAmount is a posting's amount out of an account holding bal: the
// whole balance, one minor unit more, or anything up to 500.
func drawAmount(rng *rand.Rand, bal int64) int64 {
	switch rng.IntN(4) {
	case 0:
		if bal > 0 {
			return bal
		}
	case 1:
		if bal >= 0 {
			return bal + 1
		}
	}
	return 1 + rng.Int64N(500)
}
