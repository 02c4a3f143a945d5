package reconcile_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/reconcile"
)

// The statement has a row for every balance of the merchant (issue 29,
// point 2): an over-capture leaves RECEIVABLE:<card> closing at what the
// card owes, an open hold HELD:<card> closing at what it holds, each
// reconciled, and the text names them as the bill does.
func TestStatementShowsHeldFundsAndReceivables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m := f.fundedMerchant(t, "USD", 1_000_00)
	owes := f.card(t, m.ID, "USD", 29_65)
	a := f.authorize(t, owes.CardNo, 29_65, "USD")
	f.clear(t, a.AuthID, 35_58) // 5.93 beyond the card
	holds := f.card(t, m.ID, "USD", 100_00)
	f.authorize(t, holds.CardNo, 12_34, "USD")
	from := f.now.Load().Truncate(24 * time.Hour)
	rep, err := reconcile.Statement(ctx, audit.New(f.l.Ledger), m.ID, from, from.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("statement: %+v", rep)
	}
	closing := map[string]string{}
	for _, a := range rep.Accounts {
		closing[a.Account] = a.Closing.String()
	}
	if got := closing["RECEIVABLE:"+owes.CardNo]; got != "-5.93 USD" {
		t.Errorf("the receivable closes at %q; rows %v", got, closing)
	}
	if got := closing["HELD:"+holds.CardNo]; got != "12.34 USD" {
		t.Errorf("the held funds close at %q; rows %v", got, closing)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "RECEIVABLE:"+owes.CardNo) || !strings.Contains(out.String(), "HELD:"+holds.CardNo) {
		t.Errorf("the text does not name the rows:\n%s", out.String())
	}
}
