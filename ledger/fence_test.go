package ledger_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A move's fence (sql/0037) refuses its merchant's batches; a batch that
// also holds other merchants' commands is split, so theirs commit and only
// the moving merchant's are answered EUNAVAILABLE (merchant_moving). Before,
// the whole batch was answered 503 as a lock time-out (chaos `move`: other
// merchants failed during a move's pause). The commands of both merchants
// run at once on one shard with a batch window, so batches mix them; the
// split count shows that they did.
func TestFenceFailsOnlyTheMovingMerchant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{Shards: 1, BatchWindow: 5 * time.Millisecond})
	fenced, other := newMerchant(t, l, "USD"), newMerchant(t, l, "USD")
	deposit(t, l, fenced.ID, "USD", 1_00)
	deposit(t, l, other.ID, "USD", 1_00)
	if _, err := l.DB().ExecContext(ctx, "update ledger_heads set cellmove_fenced = true where merchant_id = ?", fenced.ID); err != nil {
		t.Fatal(err)
	}
	before := l.Stats()
	// Each goroutine deposits several times in a row, so commands are
	// queued on the shard whenever the fenced merchant's fails: those must
	// not be failed with it as if the database were down.
	const n, rounds = 40, 5
	errs := make([]error, 2*n*rounds)
	var wg sync.WaitGroup
	for g := 0; g < 2*n; g++ {
		m := other.ID
		if g%2 == 0 {
			m = fenced.ID
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				_, errs[g+2*n*r] = l.Deposit(ctx, m, "USD", 1_00, nil)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		e := postings.AsError(err)
		switch {
		case i%2 == 1 && err != nil:
			t.Errorf("the other merchant's deposit %d: %v", i, err)
		case i%2 == 0 && (e.Code != postings.EUNAVAILABLE || e.Reason != postings.ReasonMerchantMoving):
			t.Errorf("the fenced merchant's deposit %d: %v, want EUNAVAILABLE merchant_moving", i, err)
		}
	}
	if !t.Failed() && l.Stats().Splits == before.Splits {
		t.Fatal("no batch held both merchants' commands: nothing was tested")
	}
	if got, _ := l.Balance(ctx, fund(other.ID, "USD")); got != (1+n*rounds)*1_00 {
		t.Errorf("the other merchant's funding is %d, want %d", got, (1+n*rounds)*1_00)
	}
	if got, _ := l.Balance(ctx, fund(fenced.ID, "USD")); got != 1_00 {
		t.Errorf("the fenced merchant's funding is %d, want 100: nothing of its refused deposits", got)
	}
}
