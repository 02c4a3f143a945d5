package remittance_test

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A remittance fee is a FEE line that names the debit it belongs to
// (relatedTo = the REMIT_OUT's seq; docs/finance.md, "The bill is the
// whole position").
func TestRemittanceFeeLineNamesItsDebit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "EUR")
	deposit(t, l, m.ID, "EUR", 5_000_00)
	r, err := l.Remit.CreateRemittance(ctx, m.ID, remitInput("DE89370400440532013000"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rng, err := l.Bills.BillRange(ctx, m.ID, time.Unix(0, 0), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var out, fee *bill.Line
	err = l.Bills.BillStream(ctx, m.ID, rng, 0, func(ls []bill.Line) error {
		for i := range ls {
			switch l := ls[i]; {
			case l.TxID == r.TxID && l.Kind == postings.KindRemitOut:
				out = &l
			case l.TxID == r.TxID && l.Kind == postings.KindFee:
				fee = &l
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out == nil || fee == nil {
		t.Fatalf("the remittance's lines: debit %+v, fee %+v", out, fee)
	}
	if fee.Amount != -5_00 || fee.RelatedTo != out.MerchantSeq || fee.RelatedTo == fee.MerchantSeq {
		t.Errorf("the fee line %+v does not name the debit %d", fee, out.MerchantSeq)
	}
	mustVerify(t, l)
}
