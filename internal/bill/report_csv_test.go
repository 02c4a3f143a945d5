package bill_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// decimalCtx is exact for every sum here: 34 digits, far beyond any
// balance's.
var decimalCtx = apd.BaseContext.WithPrecision(34)

func dec(t *testing.T, s string) *apd.Decimal {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatalf("%q is not a decimal: %v", s, err)
	}
	return d
}

func add(t *testing.T, a, b *apd.Decimal) *apd.Decimal {
	t.Helper()
	var out apd.Decimal
	if _, err := decimalCtx.Add(&out, a, b); err != nil {
		t.Fatal(err)
	}
	return &out
}

// ledgerDecimal is a balance in minor units as the currency's decimal.
func ledgerDecimal(t *testing.T, minor int64, code string) *apd.Decimal {
	t.Helper()
	cur, err := postings.LookupCurrency(code)
	if err != nil {
		t.Fatal(err)
	}
	return apd.New(minor, -int32(cur.Exponent))
}

func readCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// The balance report's CSV files are exact: read back with decimal
// arithmetic (no float anywhere), every row's opening + categories is its
// closing, each currency's report rows sum to its totals row column by
// column, and the closing of a period past the last entry is the ledger's
// balances in USD, JPY (no decimals) and KWD (three). The period's times
// are ISO 8601 with the zone's offset, and the files have no trailer: every
// row after the header is data.
func TestBalanceReportCSVIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clock atomic.Pointer[time.Time]
	set := func(tm time.Time) { clock.Store(&tm) }
	set(time.Date(2031, 10, 25, 0, 0, 0, 0, time.UTC))
	l := newLedger(t, ledger.Config{Now: func() time.Time { return *clock.Load() }})
	m := reportActivity(t, l, set, time.Date(2031, 10, 25, 0, 0, 0, 0, time.UTC), 2*24)
	paris, _ := bill.ParseTimeZone("timeZone", "Europe/Paris")
	// 2031-10-26 in Paris is 25 hours; the period ends after the activity.
	p, err := bill.NewPeriod(time.Date(2031, 10, 26, 0, 0, 0, 0, time.UTC), time.Date(2031, 10, 28, 0, 0, 0, 0, time.UTC), paris)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.BalanceReport(ctx, m, p.From(), p.To(), "")
	if err != nil {
		t.Fatal(err)
	}
	var file, totals bytes.Buffer
	if err := bill.WriteReportCSV(&file, rep); err != nil {
		t.Fatal(err)
	}
	if err := bill.WriteReportTotalsCSV(&totals, rep); err != nil {
		t.Fatal(err)
	}
	recs, trecs := readCSV(t, file.Bytes()), readCSV(t, totals.Bytes())
	if !slices.Equal(recs[0], bill.ReportCSVHeader()) || !slices.Equal(trecs[0], bill.ReportTotalsCSVHeader()) {
		t.Fatalf("headers %v / %v", recs[0], trecs[0])
	}
	col := func(h []string, name string) int {
		i := slices.Index(h, name)
		if i < 0 {
			t.Fatalf("no column %s in %v", name, h)
		}
		return i
	}
	money := []string{"opening"}
	for _, c := range bill.Categories() {
		money = append(money, string(c))
	}
	money = append(money, "closing")
	bal := balancesByClass(t, l, m)
	sums := map[string]map[string]*apd.Decimal{} // currency → column → Σ rows
	for _, r := range recs[1:] {
		cur, class := r[col(recs[0], "currency")], r[col(recs[0], "accountClass")]
		if r[col(recs[0], "periodStart")] != "2031-10-26T00:00:00+02:00" || r[col(recs[0], "periodEnd")] != "2031-10-29T00:00:00+01:00" ||
			r[col(recs[0], "timeZone")] != "Europe/Paris" {
			t.Errorf("period %v", r[2:5])
		}
		flow := dec(t, r[col(recs[0], "opening")])
		for _, c := range bill.Categories() {
			flow = add(t, flow, dec(t, r[col(recs[0], string(c))]))
		}
		closing := dec(t, r[col(recs[0], "closing")])
		if flow.Cmp(closing) != 0 {
			t.Errorf("%s %s: opening + categories = %s, closing %s", cur, class, flow, closing)
		}
		want := ledgerDecimal(t, bal[classKey{cur, bill.AccountClass(class)}], cur)
		if closing.Cmp(want) != 0 {
			t.Errorf("%s %s: closing %s, the ledger's balance %s", cur, class, closing, want)
		}
		if sums[cur] == nil {
			sums[cur] = map[string]*apd.Decimal{}
		}
		for _, name := range money {
			if sums[cur][name] == nil {
				sums[cur][name] = apd.New(0, 0)
			}
			sums[cur][name] = add(t, sums[cur][name], dec(t, r[col(recs[0], name)]))
		}
	}
	if len(recs) != 1+3*4 || len(trecs) != 1+3 {
		t.Fatalf("%d report rows and %d totals rows, want 12 and 3", len(recs)-1, len(trecs)-1)
	}
	for _, r := range trecs[1:] {
		cur := r[col(trecs[0], "currency")]
		if r[col(trecs[0], "rows")] != "4" {
			t.Errorf("%s: totals of %s rows, want 4", cur, r[col(trecs[0], "rows")])
		}
		for _, name := range money {
			if got := dec(t, r[col(trecs[0], name)]); got.Cmp(sums[cur][name]) != 0 {
				t.Errorf("%s %s: totals %s, the report rows sum to %s", cur, name, got, sums[cur][name])
			}
		}
	}
}
