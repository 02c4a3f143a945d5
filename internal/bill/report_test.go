package bill_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// reportActivity appends, hour by hour from start, every kind of movement
// in USD, JPY and KWD: deposits, card fundings, top-ups and withdrawals,
// holds and their releases and reversals, captures (one beyond what the card
// holds: a receivable) and the receivable's recovery by a top-up, refunds,
// fees, remittances out and returned, FX, and an adjustment reversing a
// deposit. It returns the merchant.
func reportActivity(t *testing.T, l books, set func(time.Time), start time.Time, hours int) int64 {
	t.Helper()
	ctx := context.Background()
	m := newMerchant(t, l, "USD", "JPY", "KWD").ID
	acct := func(ty postings.AccountType, cur string) postings.Account {
		return postings.MerchantAccount(m, ty, cur)
	}
	card := func(ty postings.AccountType, cur string, i int) postings.Account {
		return postings.CardAccount(m, ty, cur, fmt.Sprintf("crd_rep%s%d", cur, i%3))
	}
	scale := map[string]int64{"USD": 100, "JPY": 1, "KWD": 1000}
	for h := 0; h < hours; h++ {
		// 20 minutes past each hour, and 59:59.999 for the last second of a day.
		set(start.Add(time.Duration(h)*time.Hour + 20*time.Minute))
		if h%24 == 23 {
			set(start.Add(time.Duration(h+1)*time.Hour - time.Millisecond))
		}
		var es []postings.Entry
		for ci, cur := range []string{"USD", "JPY", "KWD"} {
			s := scale[cur]
			i := h + ci
			fund, avail, held := acct(postings.AccountFunding, cur), card(postings.AccountCardAvailable, cur, i), card(postings.AccountCardHeld, cur, i)
			recv := card(postings.AccountCardReceivable, cur, i)
			net, fees := acct(postings.AccountNetworkSettlement, cur), acct(postings.AccountFeeRevenue, cur)
			es = append(es,
				move(m, postings.KindDeposit, acct(postings.AccountWorld, cur), fund, 1000*s+int64(h)),
				move(m, postings.KindCardFund, fund, avail, 100*s+int64(i)),
				move(m, postings.KindCardAuth, avail, held, 30*s+7),
				move(m, postings.KindCardAuthRelease, held, avail, 10*s),
				move(m, postings.KindReversal, held, avail, 5*s),
				move(m, postings.KindCardSettle, avail, net, 12*s+3),
				move(m, postings.KindFee, fund, fees, s/4+1),
				move(m, postings.KindRemitOut, fund, acct(postings.AccountRemitInFlight, cur), 50*s),
			)
			if h%3 == 0 {
				es = append(es,
					move(m, postings.KindCardTransferOut, avail, fund, 2*s),
					move(m, postings.KindCardRefund, net, avail, 4*s+1),
					move(m, postings.KindRemitReturn, acct(postings.AccountRemitInFlight, cur), fund, 50*s),
					move(m, postings.KindFeeRefund, fees, fund, 1),
					move(m, postings.KindAdjustment, fund, acct(postings.AccountWorld, cur), 3*s),
				)
			}
			if h%4 == 1 {
				// A capture beyond what the card holds: the shortfall is a
				// receivable; a top-up repays it first.
				es = append(es,
					postings.Entry{Merchant: m, Kind: postings.KindCardSettle, Postings: []postings.Posting{
						{Source: recv, Destination: net, Amount: 2*s + 93, Currency: cur},
					}},
					postings.Entry{Merchant: m, Kind: postings.KindCardTransferIn, Postings: []postings.Posting{
						{Source: fund, Destination: recv, Amount: s + 1, Currency: cur},
						{Source: fund, Destination: avail, Amount: 4 * s, Currency: cur},
					}},
				)
			}
		}
		if h%5 == 2 { // FX: USD funding into JPY funding through the positions
			es = append(es, postings.Entry{Merchant: m, Kind: postings.KindFX, Postings: []postings.Posting{
				{Source: acct(postings.AccountFunding, "USD"), Destination: acct(postings.AccountFXPosition, "USD"), Amount: 1000, Currency: "USD"},
				{Source: acct(postings.AccountFXPosition, "JPY"), Destination: acct(postings.AccountFunding, "JPY"), Amount: 1490, Currency: "JPY"},
			}})
		}
		if _, err := l.Append(ctx, ledger.Batch{Merchant: m, Entries: es}); err != nil {
			t.Fatalf("Append hour %d: %v", h, err)
		}
	}
	return m
}

// classOf is the report's class of a statement account.
func classOf(t postings.AccountType) bill.AccountClass {
	switch t {
	case postings.AccountFunding:
		return bill.ClassFunding
	case postings.AccountCardAvailable:
		return bill.ClassCard
	case postings.AccountCardHeld:
		return bill.ClassHeld
	}
	return bill.ClassReceivable
}

type classKey struct {
	cur   string
	class bill.AccountClass
}

// The balance report ties exactly, on generated activity in USD, JPY and
// KWD over days that include Europe/Paris's spring DST change (a 23-hour day):
//   - every row: opening + Σ categories = closing;
//   - funding and card rows: the opening and closing are the statement's
//     (audit.StatementAccounts, read from the lines' balance_after), and
//     each category is the sum of the bill's lines of its types in the period;
//   - a period reaching past the last entry closes at the balances, held and
//     receivable included;
//   - consecutive days chain: one day's closing is the next day's opening;
//   - a currency filter gives that currency's rows only.
func TestBalanceReportTiesToBillStatementAndBalances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clock atomic.Pointer[time.Time]
	set := func(tm time.Time) { clock.Store(&tm) }
	set(time.Date(2031, 3, 28, 0, 0, 0, 0, time.UTC))
	l := newLedger(t, ledger.Config{Now: func() time.Time { return *clock.Load() }})
	// Paris: 2031-03-30 is 23 hours (02:00 → 03:00 CEST, 01:00 UTC).
	m := reportActivity(t, l, set, time.Date(2031, 3, 28, 0, 0, 0, 0, time.UTC), 4*24)
	other := reportActivity(t, l, set, time.Date(2031, 4, 1, 0, 0, 0, 0, time.UTC), 3) // another merchant's lines after
	_ = other
	aud := audit.New(l.Ledger)

	paris, err := bill.ParseTimeZone("timeZone", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, from, to time.Time) *bill.BalanceReport {
		t.Helper()
		rep, err := l.BalanceReport(ctx, m, from, to, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rep.Rows) != 3*4 {
			t.Fatalf("%s: %d rows, want 12", name, len(rep.Rows))
		}
		got := map[classKey]bill.ReportRow{}
		for _, r := range rep.Rows {
			var sum int64
			for _, c := range bill.Categories() {
				v, ok := r.Activity[c]
				if !ok {
					t.Errorf("%s %s %s: category %s missing", name, r.Currency, r.Class, c)
				}
				sum += v
			}
			if r.Opening+sum != r.Closing {
				t.Errorf("%s %s %s: %d + %d ≠ %d", name, r.Currency, r.Class, r.Opening, sum, r.Closing)
			}
			got[classKey{r.Currency, r.Class}] = r
		}
		// The statement's opening and closing, by class.
		st, err := aud.StatementAccounts(ctx, m, from, to)
		if err != nil {
			t.Fatal(err)
		}
		want := map[classKey][2]int64{}
		for _, a := range st {
			k := classKey{a.Account.Currency, classOf(a.Account.Type)}
			w := want[k]
			want[k] = [2]int64{w[0] + a.Opening, w[1] + a.Closing}
		}
		for k, w := range want {
			if g := got[k]; g.Opening != w[0] || g.Closing != w[1] {
				t.Errorf("%s %v: opening/closing %d/%d, the statement's %d/%d", name, k, g.Opening, g.Closing, w[0], w[1])
			}
		}
		// The bill's lines of the period, by category.
		billSum := map[classKey]map[bill.Category]int64{}
		r, err := l.BillRange(ctx, m, from, to)
		if err != nil {
			t.Fatal(err)
		}
		err = l.BillStream(ctx, m, r, 0, func(lines []bill.Line) error {
			for _, ln := range lines {
				// The line's account type is its class: since the bill is
				// the whole position, held and receivable accounts have
				// lines too.
				k := classKey{ln.Currency, bill.ClassCard}
				switch ln.AccountType {
				case postings.AccountFunding:
					k.class = bill.ClassFunding
				case postings.AccountCardHeld:
					k.class = bill.ClassHeld
				case postings.AccountCardReceivable:
					k.class = bill.ClassReceivable
				}
				c, ok := bill.CategoryOf(string(ln.Kind))
				if !ok {
					return fmt.Errorf("line type %s has no category", ln.Kind)
				}
				if billSum[k] == nil {
					billSum[k] = map[bill.Category]int64{}
				}
				billSum[k][c] += ln.Amount
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, g := range got {
			if k.class != bill.ClassFunding && k.class != bill.ClassCard {
				continue
			}
			for _, c := range bill.Categories() {
				if g.Activity[c] != billSum[k][c] {
					t.Errorf("%s %v %s: %d, the bill's lines sum to %d", name, k, c, g.Activity[c], billSum[k][c])
				}
			}
		}
		return rep
	}

	// Day by day in Paris: every day ties, and they chain.
	var prev *bill.BalanceReport
	for d := time.Date(2031, 3, 28, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2031, 4, 2, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		p, err := bill.NewPeriod(d, d, paris)
		if err != nil {
			t.Fatal(err)
		}
		rep := check(d.Format(postings.DayLayout), p.From(), p.To())
		if prev != nil {
			for i := range rep.Rows {
				if rep.Rows[i].Opening != prev.Rows[i].Closing {
					t.Errorf("%s %s %s: opening %d, the day before closed at %d", d.Format(postings.DayLayout),
						rep.Rows[i].Currency, rep.Rows[i].Class, rep.Rows[i].Opening, prev.Rows[i].Closing)
				}
			}
		}
		prev = rep
	}
	// The DST day holds 23 hours of activity: one fewer hour of deposits
	// than a UTC day (each hour deposits once per currency).
	dst, _ := bill.NewPeriod(time.Date(2031, 3, 30, 0, 0, 0, 0, time.UTC), time.Date(2031, 3, 30, 0, 0, 0, 0, time.UTC), paris)
	utcDay, _ := bill.NewPeriod(time.Date(2031, 3, 29, 0, 0, 0, 0, time.UTC), time.Date(2031, 3, 29, 0, 0, 0, 0, time.UTC), time.UTC)
	if a, b := deposits(t, l, m, dst), deposits(t, l, m, utcDay); a != 23 || b != 24 {
		t.Errorf("deposit lines: the Paris DST day %d (want 23), a UTC day %d (want 24)", a, b)
	}

	// The whole history up to after the last entry: the closing is the
	// balances, all four classes.
	whole := check("whole", time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2031, 5, 1, 0, 0, 0, 0, time.UTC))
	bal := balancesByClass(t, l, m)
	for _, r := range whole.Rows {
		if r.Closing != bal[classKey{r.Currency, r.Class}] {
			t.Errorf("whole %s %s: closing %d, balances %d", r.Currency, r.Class, r.Closing, bal[classKey{r.Currency, r.Class}])
		}
		if r.Opening != 0 {
			t.Errorf("whole %s %s: opening %d before any entry", r.Currency, r.Class, r.Opening)
		}
	}
	// The generated activity reaches every category in some row of each
	// currency (FX only in USD and JPY), so that no category is tied by
	// being empty.
	moved := map[string]map[bill.Category]bool{}
	for _, r := range whole.Rows {
		if moved[r.Currency] == nil {
			moved[r.Currency] = map[bill.Category]bool{}
		}
		for c, v := range r.Activity {
			moved[r.Currency][c] = moved[r.Currency][c] || v != 0
		}
	}
	for cur, cats := range moved {
		for _, c := range bill.Categories() {
			if !cats[c] && (c != bill.CategoryFX || cur != "KWD") {
				t.Errorf("%s: category %s never moved", cur, c)
			}
		}
	}
	for _, r := range whole.Rows {
		if r.Class == bill.ClassReceivable && (r.Activity[bill.CategoryReceivables] >= 0 || r.Closing >= 0) {
			t.Errorf("%s receivable: activity %d, closing %d; want a debt", r.Currency, r.Activity[bill.CategoryReceivables], r.Closing)
		}
	}
	// One currency: its rows only, the same figures.
	jpy, err := l.BalanceReport(ctx, m, whole.From, whole.To, "JPY")
	if err != nil {
		t.Fatal(err)
	}
	if len(jpy.Rows) != 4 || jpy.Rows[0].Currency != "JPY" || jpy.Rows[0].Closing != bal[classKey{"JPY", bill.ClassFunding}] {
		t.Errorf("JPY only: %+v", jpy.Rows)
	}
}

// deposits counts the merchant's DEPOSIT lines in USD in the period.
func deposits(t *testing.T, l books, m int64, p bill.Period) int64 {
	t.Helper()
	r, err := l.BillRange(context.Background(), m, p.From(), p.To())
	if err != nil {
		t.Fatal(err)
	}
	fr, err := l.FilteredBillRange(context.Background(), m, r, bill.Filter{Kinds: []postings.Kind{postings.KindDeposit}, Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	return fr.Matches
}

// balancesByClass reads the merchant's balances now, summed by currency and
// report class: the ledger's own fold, kept with each entry.
func balancesByClass(t *testing.T, l books, m int64) map[classKey]int64 {
	t.Helper()
	var rows []struct {
		Type     string `bun:"type"`
		Currency string `bun:"currency"`
		Balance  int64  `bun:"balance"`
	}
	err := l.DB().NewRaw(`select a.type, a.currency, coalesce(sum(b.balance), 0)::bigint as balance
		from accounts a join balances b on b.account_id = a.id
		where a.merchant_id = ? and a.type in ('funding', 'card_available', 'card_held', 'card_receivable')
		group by a.type, a.currency`, m).Scan(context.Background(), &rows)
	if err != nil {
		t.Fatal(err)
	}
	out := map[classKey]int64{}
	for _, r := range rows {
		out[classKey{r.Currency, classOf(postings.AccountType(r.Type))}] += r.Balance
	}
	return out
}
