package bill_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/postings"
)

// A merchant with a few thousand bill lines over five days: every page of
// every range is the bill_seq range the arithmetic says, read from the
// lines with the time range (checked against a plain SQL filter), and the
// stream of a range is its pages end to end.
func TestBillPagesAreSequenceRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := fiveDaysOfLines(t, nil)
	l, m, day0 := fx.l, fx.m, billDay0

	var all int64
	if err := l.DB().NewRaw(`select count(*) from bill_lines where merchant_id = ?`, m.ID).Scan(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if all < 3000 {
		t.Fatalf("only %d lines", all)
	}
	// created_at never decreases in bill_seq: the premise of the ranges.
	var inversions int
	if err := l.DB().NewRaw(`select count(*) from bill_lines a join bill_lines b
		on b.merchant_id = a.merchant_id and b.bill_seq = a.bill_seq + 1
		where a.merchant_id = ? and b.created_at < a.created_at`, m.ID).Scan(ctx, &inversions); err != nil || inversions != 0 {
		t.Fatalf("created_at decreases %d times (%v)", inversions, err)
	}

	expected := func(from, to time.Time) []int64 {
		var seqs []int64
		if err := l.DB().NewRaw(`select bill_seq from bill_lines
			where merchant_id = ? and created_at >= ? and created_at < ? order by bill_seq`, m.ID, from, to).Scan(ctx, &seqs); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] != seqs[i-1]+1 {
				t.Fatalf("the lines of [%s, %s) are not contiguous at %d", from, to, seqs[i])
			}
		}
		return seqs
	}
	ranges := []struct{ from, to time.Time }{
		{day0, day0.AddDate(0, 0, 5)},                                   // everything
		{day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 2)},                  // one whole day in the middle
		{day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 4)},                  // three days
		{day0.Add(5*time.Hour + time.Second), day0.Add(31 * time.Hour)}, // mid-batch boundaries
		{day0.AddDate(0, 0, -3), day0},                                  // before the first line
		{day0.AddDate(0, 0, 6), day0.AddDate(0, 0, 7)},                  // after the last
		{day0.AddDate(0, 0, 2), day0.AddDate(0, 0, 1)},                  // to before from
	}
	for _, rg := range ranges {
		want := expected(rg.from, rg.to)
		for _, size := range []int{1, 7, 50, 500, bill.PageMax} {
			pages := (len(want) + size - 1) / size
			for _, page := range []int{1, 2, pages / 2, pages - 1, pages, pages + 1, 1_000_000} {
				if page < 1 {
					continue
				}
				p, err := l.Bill(ctx, m.ID, rg.from, rg.to, page, size)
				if err != nil {
					t.Fatalf("Bill(%s, %s, %d, %d): %v", rg.from, rg.to, page, size, err)
				}
				if p.Total != int64(len(want)) {
					t.Fatalf("[%s, %s): total %d, want %d", rg.from, rg.to, p.Total, len(want))
				}
				lo := min((page-1)*size, len(want))
				hi := min(page*size, len(want))
				if (page-1)*size > len(want) {
					lo, hi = len(want), len(want)
				}
				w := want[lo:hi]
				if len(p.Lines) != len(w) {
					t.Fatalf("[%s, %s) page %d size %d: %d lines, want %d", rg.from, rg.to, page, size, len(p.Lines), len(w))
				}
				for i, line := range p.Lines {
					if line.BillSeq != w[i] {
						t.Fatalf("[%s, %s) page %d size %d line %d: bill_seq %d, want %d", rg.from, rg.to, page, size, i, line.BillSeq, w[i])
					}
					if line.CreatedAt.Before(rg.from) || !line.CreatedAt.Before(rg.to) {
						t.Fatalf("line %d at %s outside [%s, %s)", line.BillSeq, line.CreatedAt, rg.from, rg.to)
					}
				}
			}
		}
		// The stream is the range end to end, in batches of at most 64.
		r, err := l.BillRange(ctx, m.ID, rg.from, rg.to)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		err = l.BillStream(ctx, m.ID, r, 64, func(lines []bill.Line) error {
			if len(lines) == 0 || len(lines) > 64 {
				return fmt.Errorf("batch of %d lines", len(lines))
			}
			for _, line := range lines {
				got = append(got, line.BillSeq)
			}
			return nil
		})
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("stream of [%s, %s): %d lines, want %d (%v)", rg.from, rg.to, len(got), len(want), err)
		}
	}

	// The lines carry what was written: a card funding is the funding
	// account's debit, then the card's credit.
	p, err := l.Bill(ctx, m.ID, day0, day0.Add(time.Hour), 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Lines) != 4 {
		t.Fatalf("first lines %+v", p.Lines)
	}
	dep, fundOut, cardIn := p.Lines[0], p.Lines[2], p.Lines[3]
	if dep.Kind != postings.KindDeposit || dep.Account != bill.AccountFunding || dep.Amount != 100 ||
		dep.Currency != "USD" || dep.BalanceAfter != 100 || dep.MerchantSeq != 1 || dep.BillSeq != 1 || !dep.CreatedAt.Equal(day0) {
		t.Errorf("deposit line %+v", dep)
	}
	if fundOut.Kind != postings.KindCardFund || fundOut.Account != bill.AccountFunding || fundOut.Amount != -3 ||
		fundOut.MerchantSeq != 3 || cardIn.Account != "crd_bill02" || cardIn.Amount != 3 || cardIn.BalanceAfter != 3 || cardIn.MerchantSeq != 3 {
		t.Errorf("card funding lines %+v %+v", fundOut, cardIn)
	}

	// Bad pages and sizes are refused, naming the parameter.
	for _, c := range []struct {
		page, size int
		field      string
	}{{0, 10, "page"}, {-1, 10, "page"}, {1, 0, "size"}, {1, bill.PageMax + 1, "size"}} {
		_, err := l.Bill(ctx, m.ID, day0, day0.AddDate(0, 0, 1), c.page, c.size)
		if e := postings.AsError(err); e == nil || e.Code != postings.EINVALID || e.Field != c.field {
			t.Errorf("page %d size %d: %v", c.page, c.size, err)
		}
	}
	gatewaytest.Verify(t, l.Ledger)
}
