package bill_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A merchant with about 5,800 bill lines (six bill_blocks blocks) over five
// days: every page of every filter of every range is what a plain SQL filter
// of the lines says, in order, whatever the page and size, and the stream
// of a filter is its pages end to end. Another merchant's card, an unknown
// card, a kind never billed and a currency never used have no lines.
func TestFilteredBillPagesMatchAPlainFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A few blocks' worth of lines hold no card transfer: whole blocks
	// without a match of that kind.
	fx := fiveDaysOfLines(t, func(b, i int, m int64, cur string) (postings.Entry, bool) {
		if b%7 == 3 && i%4 == 3 {
			return move(m, postings.KindCardTransferIn, fund(m, cur), cardAvail(m, cur, "crd_rare"), 1), true
		}
		return postings.Entry{}, false
	})
	l, m, other, set, day0 := fx.l, fx.m, fx.other, fx.set, billDay0
	// The other merchant funds a card whose number m also filters by.
	if _, err := l.Append(ctx, ledger.Batch{Merchant: other.ID, Entries: []postings.Entry{
		move(other.ID, postings.KindCardFund, fund(other.ID, "USD"), cardAvail(other.ID, "USD", "crd_foreign"), 1),
	}}); err != nil {
		t.Fatal(err)
	}

	expected := func(from, to time.Time, f bill.Filter) []int64 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		var seqs []int64
		if err := l.DB().NewRaw(`select bill_seq from bill_lines
			where merchant_id = ? and created_at >= ? and created_at < ?
			  and (cardinality(?::text[]) = 0 or kind = any(?::text[]))
			  and (? = '' or currency = ?) and (? = '' or card_no = ?)
			order by bill_seq`, m.ID, from, to, pgdialect.Array(kinds), pgdialect.Array(kinds),
			f.Currency, f.Currency, f.CardNo, f.CardNo).Scan(ctx, &seqs); err != nil {
			t.Fatal(err)
		}
		return seqs
	}
	filters := []bill.Filter{
		{Kinds: []postings.Kind{postings.KindDeposit}},
		{Kinds: []postings.Kind{postings.KindCardTransferIn}},
		{Kinds: []postings.Kind{postings.KindCardTransferIn, postings.KindDeposit}},
		{Currency: "EUR"},
		{Kinds: []postings.Kind{postings.KindCardFund}, Currency: "USD"},
		{CardNo: "crd_bill03"},
		{CardNo: "crd_rare", Currency: "USD"},
		{CardNo: "crd_bill02", Kinds: []postings.Kind{postings.KindDeposit}},
		{CardNo: "crd_foreign"},
		{CardNo: "crd_unknown"},
		{Kinds: []postings.Kind{postings.KindRemitSettle}},
		{Currency: "GBP"},
	}
	ranges := []struct{ from, to time.Time }{
		{day0, day0.AddDate(0, 0, 5)},
		{day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 4)},
		{day0.Add(5*time.Hour + time.Second), day0.Add(31 * time.Hour)},
		{day0.Add(2 * time.Hour), day0.Add(4 * time.Hour)}, // inside one block
		{day0.AddDate(0, 0, 6), day0.AddDate(0, 0, 7)},
	}
	nonEmpty := 0
	for _, rg := range ranges {
		r, err := l.BillRange(ctx, m.ID, rg.from, rg.to)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range filters {
			want := expected(rg.from, rg.to, f)
			if len(want) > 0 {
				nonEmpty++
			}
			for _, size := range []int{1, 7, 50, bill.PageMax} {
				pages := (len(want) + size - 1) / size
				for _, page := range []int{1, 2, 3, pages / 3, pages / 2, pages - 1, pages, pages + 1, 1_000_000} {
					if page < 1 || (size == 1 && page > 3 && page != pages && page != 1_000_000) {
						continue
					}
					p, err := l.FilteredBill(ctx, m.ID, r, f, page, size)
					if err != nil {
						t.Fatalf("FilteredBill(%+v, %d, %d): %v", f, page, size, err)
					}
					if p.Matches != int64(len(want)) {
						t.Fatalf("[%s, %s) %+v: total %d, want %d", rg.from, rg.to, f, p.Matches, len(want))
					}
					lo, hi := len(want), len(want)
					if (page-1)*size < len(want) {
						lo, hi = (page-1)*size, min(page*size, len(want))
					}
					var got []int64
					for _, line := range p.Lines {
						got = append(got, line.BillSeq)
					}
					if !slices.Equal(got, want[lo:hi]) {
						t.Fatalf("[%s, %s) %+v page %d size %d: %v, want %v", rg.from, rg.to, f, page, size, got, want[lo:hi])
					}
				}
			}
			fr, err := l.FilteredBillRange(ctx, m.ID, r, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			err = l.FilteredBillStream(ctx, m.ID, fr, 100, func(lines []bill.Line) error {
				if len(lines) == 0 || len(lines) > 100 {
					return fmt.Errorf("batch of %d lines", len(lines))
				}
				for _, line := range lines {
					got = append(got, line.BillSeq)
				}
				return nil
			})
			if err != nil || !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("stream of %+v: %d lines, want %d (%v)", f, len(got), len(want), err)
			}
		}
	}
	if nonEmpty < 15 {
		t.Fatalf("only %d non-empty filters: the test checks too little", nonEmpty)
	}

	// A line written later lands after every page that was read.
	r, err := l.BillRange(ctx, m.ID, day0, day0.AddDate(0, 0, 10))
	if err != nil {
		t.Fatal(err)
	}
	f := bill.Filter{Kinds: []postings.Kind{postings.KindDeposit}, Currency: "EUR"}
	before, err := l.FilteredBill(ctx, m.ID, r, f, 3, 50)
	if err != nil {
		t.Fatal(err)
	}
	set(day0.AddDate(0, 0, 6))
	gatewaytest.Deposit(t, l.Ledger, m.ID, "EUR", 7_00)
	r2, err := l.BillRange(ctx, m.ID, day0, day0.AddDate(0, 0, 10))
	if err != nil {
		t.Fatal(err)
	}
	after, err := l.FilteredBill(ctx, m.ID, r2, f, 3, 50)
	if err != nil {
		t.Fatal(err)
	}
	if after.Matches != before.Matches+1 || fmt.Sprint(after.Lines) != fmt.Sprint(before.Lines) {
		t.Errorf("a new line moved page 3: %d → %d matches", before.Matches, after.Matches)
	}

	// bill_blocks holds exactly the counts of the lines.
	var drift int
	if err := l.DB().NewRaw(`select count(*) from (
		select merchant_id, kind, currency, (bill_seq - 1) / 1024 as block, count(*) as n from bill_lines group by 1, 2, 3, 4
		) l full join bill_blocks b using (merchant_id, kind, currency, block)
		where l.n is distinct from b.n`).Scan(ctx, &drift); err != nil || drift != 0 {
		t.Errorf("bill_blocks differs from bill_lines in %d rows (%v)", drift, err)
	}
	gatewaytest.Verify(t, l.Ledger)
}
