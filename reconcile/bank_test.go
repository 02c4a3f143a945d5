package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/reconcile"
)

// bankFixture is a merchant in USD, JPY and KWD with four deposits that
// carry the bank's reference: three booked on the fixture's first day, one
// on the next.
type bankFixture struct {
	*fixture
	merchant int64
	shopNo   string
}

const bankHeader = "value_date,amount,currency,reference\n"

func newBankFixture(t *testing.T) *bankFixture {
	t.Helper()
	f := newFixture(t)
	m := f.merchant(t, "USD", "JPY", "KWD")
	b := &bankFixture{fixture: f, merchant: m.ID, shopNo: m.ShopNo}
	dep := deposit.New(f.l.Ledger)
	book := func(cur string, minor int64, ref string) {
		if _, err := dep.Deposit(context.Background(), m.ID, cur, minor, ref, nil); err != nil {
			t.Fatalf("Deposit %s: %v", ref, err)
		}
	}
	book("USD", 10000, "BANK-A") // 100.00 USD
	book("JPY", 1500, "BANK-B")  // 1500 JPY
	book("KWD", 7125, "BANK-C")  // 7.125 KWD
	f.advance(t, 24*time.Hour)   // 2030-03-02
	book("USD", 500, "BANK-D")   // 5.00 USD, booked the next day
	f.advance(t, 24*time.Hour)   // the clock past both days
	return b
}

func (b *bankFixture) reconcile(t *testing.T, rec *reconcile.Records, file string) (*reconcile.BankReport, error) {
	t.Helper()
	return reconcile.Bank(context.Background(), reconcile.JournalDeposits{DB: b.db}, rec, reconcile.BankInput{
		File: strings.NewReader(file), Name: "statement.csv", Merchant: b.merchant, ShopNo: b.shopNo, Actor: "test"})
}

// The lines of the first day that match its three deposits.
const (
	lineA = "2030-03-01,100.00,USD,BANK-A\n"
	lineB = "2030-03-01,1500,JPY,BANK-B\n"
	lineC = "2030-03-01,7.125,KWD,BANK-C\n"
	day1  = "# period: 2030-03-01\n" + bankHeader
)

// TestBankStatementCategories: every discrepancy a bank statement can have
// is its own category with its own reason, and any of them is exit status 1.
func TestBankStatementCategories(t *testing.T) {
	b := newBankFixture(t)
	for _, tc := range []struct {
		name, file string
		want       map[string]int64 // categories other than matched, by count
		matched    int64
		detail     string // in the first item's detail
	}{
		{"every deposit", day1 + lineA + lineB + lineC, nil, 3, ""},
		{"trailing zeros are not decimals", day1 + "2030-03-01,100.0,USD,BANK-A\n" + lineB + "2030-03-01,7.1250,KWD,BANK-C\n", nil, 3, ""},
		{"a deposit missing", day1 + lineA + lineB, map[string]int64{"missing_in_file": 1}, 2, "no line for it"},
		{"an extra line", day1 + lineA + lineB + lineC + "2030-03-01,3.00,USD,BANK-X\n",
			map[string]int64{"missing_in_ledger": 1}, 3, "no deposit of shop"},
		{"a wrong amount", day1 + "2030-03-01,100.01,USD,BANK-A\n" + lineB + lineC,
			map[string]int64{"amount_differs": 1}, 2, "bank − ledger = 0.01 USD"},
		{"a KWD amount off by one fils", day1 + lineA + lineB + "2030-03-01,7.124,KWD,BANK-C\n",
			map[string]int64{"amount_differs": 1}, 2, "bank − ledger = -0.001 KWD"},
		{"a JPY amount off by one yen", day1 + lineA + "2030-03-01,1501,JPY,BANK-B\n" + lineC,
			map[string]int64{"amount_differs": 1}, 2, "bank − ledger = 1 JPY"},
		{"a wrong currency", day1 + "2030-03-01,100.00,EUR,BANK-A\n" + lineB + lineC,
			map[string]int64{"currency_differs": 1}, 2, "the deposit with this reference is 100.00 USD"},
		{"a value date outside the period", day1 + "2030-02-28,100.00,USD,BANK-A\n" + lineB + lineC,
			map[string]int64{"outside_period": 1}, 2, "outside the statement's period"},
		{"a deposit booked outside the period", day1 + lineA + lineB + lineC + "2030-03-01,5.00,USD,BANK-D\n",
			map[string]int64{"date_differs": 1}, 3, "booked on 2030-03-02"},
		{"a line twice", day1 + lineA + lineA + lineB + lineC, map[string]int64{"duplicate_in_file": 1}, 3, "already on line 3"},
		{"an unreadable amount", day1 + "2030-03-01,1.0.0,USD,BANK-A\n" + lineB + lineC, map[string]int64{"invalid_row": 1}, 2, "amount"},
		{"more decimals than KWD has", day1 + lineA + lineB + "2030-03-01,7.1251,KWD,BANK-C\n", map[string]int64{"invalid_row": 1}, 2, "amount"},
		{"a debit", day1 + "2030-03-01,-100.00,USD,BANK-A\n" + lineB + lineC, map[string]int64{"invalid_row": 1}, 2, "positive"},
		{"a reference with a slash", day1 + lineA + lineB + lineC + "2030-03-01,1.00,USD,BANK/Y\n", map[string]int64{"invalid_row": 1}, 3, "reference"},
		{"only the header", day1, map[string]int64{"empty_file": 1, "missing_in_file": 3}, 0, "truncated export"},
		{"the next day", "# period: 2030-03-02\n" + bankHeader + "2030-03-02,5.00,USD,BANK-D\n", nil, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := b.reconcile(t, nil, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, it := range rep.Items {
				got[it.Category]++
			}
			if len(got) != len(tc.want) || rep.Counts.Matched != tc.matched {
				t.Fatalf("items %v, matched %d; want %v, matched %d: %+v", got, rep.Counts.Matched, tc.want, tc.matched, rep.Items)
			}
			for c, n := range tc.want {
				if got[c] != n {
					t.Fatalf("%s: %d, want %d: %+v", c, got[c], n, rep.Items)
				}
			}
			wantStatus := reconcile.ExitMatched
			if len(tc.want) > 0 {
				wantStatus = reconcile.ExitDiscrepancies
				if !strings.Contains(rep.Items[0].Detail, tc.detail) {
					t.Errorf("detail %q, want it to say %q", rep.Items[0].Detail, tc.detail)
				}
			}
			if rep.Verdict.Status != wantStatus {
				t.Errorf("verdict %+v, want exit status %d", rep.Verdict, wantStatus)
			}
			var out strings.Builder
			if err := rep.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if !strings.HasPrefix(text, "Bank statement statement.csv") || !strings.HasSuffix(text, rep.Verdict.Line()+"\n") ||
				strings.Index(text, "CURRENCY") > strings.Index(text, rep.Verdict.Word) {
				t.Errorf("the report does not start with the totals and end with the verdict:\n%s", text)
			}
		})
	}
}

// TestBankStatementTotals: the totals per currency, file against ledger,
// are exact in each currency's decimals (JPY 0, USD 2, KWD 3): summed here
// with apd from the file's own text.
func TestBankStatementTotals(t *testing.T) {
	b := newBankFixture(t)
	rep, err := b.reconcile(t, nil, "# period: 2030-03-01/2030-03-02\n"+bankHeader+lineA+lineB+lineC+
		"2030-03-02,5.00,USD,BANK-D\n2030-03-02,0.07,USD,BANK-Z\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ file, ledger, matched string }{
		"JPY": {"1500", "1500", "1500"},
		"KWD": {"7.125", "7.125", "7.125"},
		"USD": {sum(t, "100.00", "5.00", "0.07"), sum(t, "100.00", "5.00"), sum(t, "100.00", "5.00")},
	}
	if len(rep.Totals) != len(want) {
		t.Fatalf("totals %+v", rep.Totals)
	}
	for _, tot := range rep.Totals {
		w := want[tot.Currency]
		for _, c := range []struct{ name, got, want string }{{"file", string(tot.FileAmount), w.file},
			{"ledger", string(tot.LedgerAmount), w.ledger}, {"matched", string(tot.MatchedAmount), w.matched}} {
			if !decimalEqual(t, c.got, c.want) {
				t.Errorf("%s %s amount %s, want %s", tot.Currency, c.name, c.got, c.want)
			}
		}
	}
	if rep.Counts.MissingInLedger != 1 || rep.Verdict.Status != reconcile.ExitDiscrepancies {
		t.Errorf("counts %+v, verdict %+v", rep.Counts, rep.Verdict)
	}
}

func sum(t *testing.T, amounts ...string) string {
	t.Helper()
	var total apd.Decimal
	for _, a := range amounts {
		d, _, err := apd.NewFromString(a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := apd.BaseContext.Add(&total, &total, d); err != nil {
			t.Fatal(err)
		}
	}
	return total.String()
}

func decimalEqual(t *testing.T, a, b string) bool {
	t.Helper()
	x, _, err1 := apd.NewFromString(a)
	y, _, err2 := apd.NewFromString(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("not decimals: %q %q", a, b)
	}
	return x.Cmp(y) == 0 && strings.Count(a, ".") == strings.Count(b, ".")
}

// TestBankStatementSecondClaim: a statement that matched is recorded; a
// second statement claiming the same deposits, read by another Records
// (another run of the command), is already_reconciled, while the same file
// again is the same run.
func TestBankStatementSecondClaim(t *testing.T) {
	b := newBankFixture(t)
	first := day1 + lineA + lineB + lineC
	rep, err := b.reconcile(t, reconcile.NewRecords(b.db.DB), first)
	if err != nil || rep.Verdict.Status != reconcile.ExitMatched || rep.Recorded == nil || rep.Recorded.Items != 3 ||
		rep.Recorded.Kind != reconcile.KindBankDeposit {
		t.Fatalf("first statement: %+v, %v", rep, err)
	}
	again, err := b.reconcile(t, reconcile.NewRecords(b.db.DB), first)
	if err != nil || again.Verdict.Status != reconcile.ExitMatched || !again.AlreadyRecorded || again.Recorded.ID != rep.Recorded.ID {
		t.Fatalf("the same file again: %+v, %v", again, err)
	}
	second, err := b.reconcile(t, reconcile.NewRecords(b.db.DB), day1+lineC+lineB+lineA)
	if err != nil {
		t.Fatal(err)
	}
	if second.Counts.AlreadyReconciled != 3 || second.Counts.Matched != 0 || second.Verdict.Status != reconcile.ExitDiscrepancies ||
		second.Recorded != nil || !strings.Contains(second.Items[0].Detail, "statement.csv") {
		t.Fatalf("a second statement of the same deposits: counts %+v, verdict %+v, items %+v", second.Counts, second.Verdict, second.Items)
	}
	// A card clearing's records are another kind: they never claim a deposit.
	claims, err := reconcile.NewRecords(b.db.DB).Claims(context.Background(), reconcile.KindCardClearing, []int64{1, 2, 3, 4, 5})
	if err != nil || len(claims) != 0 {
		t.Fatalf("card clearing claims %v, %v", claims, err)
	}
}

// TestBankStatementUnusable: a file that cannot be reconciled is a
// FileError (exit status 2) naming the line, never echoing the bytes.
func TestBankStatementUnusable(t *testing.T) {
	b := newBankFixture(t)
	for _, tc := range []struct{ name, file, want string }{
		{"Latin-1", day1 + lineA + "2030-03-01,1500,JPY,caf\xe9\n", "bank statement, line 4: byte 24 (0xE9) is not UTF-8"},
		{"no period", bankHeader + lineA, "bank statement: the file states no settlement period"},
		{"a settlement file's header", day1[:21] + "message_id,auth_id,amount,currency,date\n", "bank statement, line 2: the header must be value_date,amount,currency,reference"},
		{"a bad period", "# period: 2030-02-30\n" + bankHeader, "bank statement, line 1: the period"},
		{"nothing", "", "bank statement: the file is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.reconcile(t, nil, tc.file)
			if !reconcile.IsUnusable(err) || !strings.HasPrefix(err.Error(), tc.want) || !utf8.ValidString(err.Error()) {
				t.Fatalf("err %v, want an unusable file: %q", err, tc.want)
			}
			if v := reconcile.UnusableVerdict(err); v.Status != reconcile.ExitUnusable {
				t.Fatalf("verdict %+v", v)
			}
		})
	}
}
