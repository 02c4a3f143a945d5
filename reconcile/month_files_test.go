package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// A file of the outside world: its header lines, its rows as cells, and
// where a row's amount and currency are.
type monthFile struct {
	kind, head    string
	rows          [][]string
	amount, curCo int
	// known are the items every run of this file has besides the
	// tampering's: see bankFile.
	known []string
	// run reconciles the text; rec nil: nothing is recorded.
	run func(text string, rec *reconcile.Records) (status int, items []string, matched int64, recorded bool)
}

func (f *monthFile) text(rows [][]string) string {
	var b strings.Builder
	b.WriteString(f.head)
	for _, r := range rows {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	return b.String()
}

// checkFiles: the network's settlement file of the month, each merchant's
// bank statement, the rail's report and the network's refund file, written from what the test sent
// (not read back from the ledger), each reconcile with exit status 0 and
// are recorded; before that, each with an amount changed by one minor
// unit, a row dropped and a row duplicated is exit status 1 with exactly
// that discrepancy, and is not recorded.
func (mo *month) checkFiles(t *testing.T) {
	t.Helper()
	files := []*monthFile{mo.settlementFile()}
	for _, sh := range mo.shops {
		files = append(files, mo.bankFile(sh))
	}
	files = append(files, mo.railFile(), mo.refundFile())
	for _, f := range files {
		if len(f.rows) < 3 {
			t.Fatalf("%s: %d rows, too few to tamper with", f.kind, len(f.rows))
		}
		i := len(f.rows) / 2
		bumped := append([]string(nil), f.rows[i]...)
		cur := postings.MustCurrency(bumped[f.curCo])
		minor, err := postings.ParseSignedAmount(bumped[f.amount], cur)
		if err != nil {
			t.Fatal(err)
		}
		bumped[f.amount] = postings.FormatMinor(minor+1, cur)
		n := int64(len(f.rows))
		for _, tc := range []struct {
			name, want string
			rows       [][]string
			matched    int64 // the duplicate is not matched; the row it repeats is
		}{
			{"an amount one minor unit more", "amount_differs", replaced(f.rows, i, bumped), n - 1},
			{"a row dropped", "missing_in_file", append(append([][]string(nil), f.rows[:i]...), f.rows[i+1:]...), n - 1},
			{"a row duplicated", "duplicate_in_file", append(append([][]string(nil), f.rows...), f.rows[i]), n},
		} {
			status, items, matched, recorded := f.run(f.text(tc.rows), nil)
			want := append([]string{tc.want}, f.known...)
			if status != reconcile.ExitDiscrepancies || !sameItems(items, want) || matched != tc.matched || recorded {
				t.Errorf("%s, %s: exit %d, items %v, %d matched of %d, recorded %v; want exit 1, items %v", f.kind, tc.name, status, items,
					matched, n, recorded, want)
			}
		}
		status, items, matched, recorded := f.run(f.text(f.rows), reconcile.NewRecords(mo.db.DB))
		if len(f.known) > 0 {
			// Not recorded: a file with discrepancies is not accepted.
			if status != reconcile.ExitDiscrepancies || !sameItems(items, f.known) || matched != n || recorded {
				t.Errorf("%s: exit %d, items %v, %d of %d matched, recorded %v; want only %v", f.kind, status, items, matched, n, recorded, f.known)
			}
			continue
		}
		if status != reconcile.ExitMatched || len(items) != 0 || matched != n || !recorded {
			t.Errorf("%s: exit %d, items %v, %d of %d matched, recorded %v; want exit 0, all matched, recorded", f.kind, status, items,
				matched, n, recorded)
		}
	}
}

// outcome is what a check needs of a report: the exit status, the items'
// categories (named by name), the matched count, whether it was recorded.
func outcome[I any](v reconcile.Verdict, items []I, name func(I) string, matched int64, rec *reconcile.Run) (int, []string, int64, bool) {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return v.Status, out, matched, rec != nil
}

// sameItems compares item lists as multisets.
func sameItems(got, want []string) bool {
	a, b := append([]string(nil), got...), append([]string(nil), want...)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func replaced(rows [][]string, i int, row []string) [][]string {
	out := append([][]string(nil), rows...)
	out[i] = row
	return out
}

func (mo *month) period() string {
	return "# period: " + mo.start.Format("2006-01-02") + "/" + mo.end.AddDate(0, 0, -1).Format("2006-01-02") + "\n"
}

func (mo *month) settlementFile() *monthFile {
	f := &monthFile{kind: "settlement file", head: mo.period() + "message_id,auth_id,amount,currency,date\n", amount: 2, curCo: 3}
	for i, c := range mo.clearings {
		f.rows = append(f.rows, []string{fmt.Sprintf("net-%d", i+1), c.auth, postings.FormatMinor(c.minor, postings.MustCurrency(c.cur)), c.cur, c.day})
	}
	f.run = func(text string, rec *reconcile.Records) (int, []string, int64, bool) {
		rep, err := reconcile.Settlement(context.Background(), mo.l.Settlements(), rec, reconcile.SettlementInput{
			File: strings.NewReader(text), Name: "network-2030-03.csv", Actor: "test:month"})
		if err != nil {
			return -1, []string{err.Error()}, 0, false
		}
		return outcome(rep.Verdict, rep.Items, func(it reconcile.SettlementItem) string { return it.Category }, rep.Counts.Matched, rep.Recorded)
	}
	return f
}

func (mo *month) bankFile(sh *shopRec) *monthFile {
	f := &monthFile{kind: "bank statement of " + sh.m.ShopNo, head: mo.period() + "value_date,amount,currency,reference\n", amount: 1, curCo: 2}
	for _, d := range sh.deposits {
		f.rows = append(f.rows, []string{d.day, postings.FormatMinor(d.minor, postings.MustCurrency(d.cur)), d.cur, d.ref})
	}
	// The deposit the maker–checker adjustment reversed has no line: the
	// bank never sent it, and the reconciliation leaves reversed deposits
	// out (reconcile/bank_source.go).
	f.run = func(text string, rec *reconcile.Records) (int, []string, int64, bool) {
		rep, err := reconcile.Bank(context.Background(), reconcile.JournalDeposits{DB: mo.db}, rec, reconcile.BankInput{
			File: strings.NewReader(text), Name: "bank-" + sh.m.ShopNo + ".csv", Merchant: sh.m.ID, ShopNo: sh.m.ShopNo, Actor: "test:month"})
		if err != nil {
			return -1, []string{err.Error()}, 0, false
		}
		return outcome(rep.Verdict, rep.Items, func(it reconcile.BankItem) string { return it.Category },
			rep.Counts.Matched, rep.Recorded)
	}
	return f
}

func (mo *month) railFile() *monthFile {
	f := &monthFile{kind: "rail report", head: mo.period() + "tx_id,status,amount,fee,currency,date\n", amount: 2, curCo: 4}
	for _, r := range mo.rails {
		cur := postings.MustCurrency(r.cur)
		f.rows = append(f.rows, []string{r.tx, r.status, postings.FormatMinor(r.minor, cur), postings.FormatMinor(r.fee, cur), r.cur, r.day})
	}
	f.run = func(text string, rec *reconcile.Records) (int, []string, int64, bool) {
		rep, err := reconcile.Rail(context.Background(), mo.l.RailEntries(), rec, reconcile.RailInput{
			File: strings.NewReader(text), Name: "rail-2030-03.csv", Actor: "test:month"})
		if err != nil {
			return -1, []string{err.Error()}, 0, false
		}
		return outcome(rep.Verdict, rep.Items, func(it reconcile.RailItem) string { return it.Category }, rep.Counts.Matched, rep.Recorded)
	}
	return f
}

func (mo *month) refundFile() *monthFile {
	f := &monthFile{kind: "refund file", head: mo.period() + "message_id,card_no,amount,currency,date\n", amount: 2, curCo: 3}
	for _, r := range mo.refunds {
		f.rows = append(f.rows, []string{r.msg, r.card, postings.FormatMinor(r.minor, postings.MustCurrency(r.cur)), r.cur, r.day})
	}
	f.run = func(text string, rec *reconcile.Records) (int, []string, int64, bool) {
		rep, err := reconcile.Refunds(context.Background(), mo.l.Refunds(), rec, reconcile.RefundInput{
			File: strings.NewReader(text), Name: "refunds-2030-03.csv", Actor: "test:month"})
		if err != nil {
			return -1, []string{err.Error()}, 0, false
		}
		return outcome(rep.Verdict, rep.Items, func(it reconcile.RefundItem) string { return it.Category }, rep.Counts.Matched, rep.Recorded)
	}
	return f
}
