package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/reconcile"
)

// The ledger's side is every clearing of the file's period, each row is
// held to its clearing's day, and a clearing another file accounted for
// is a second claim: the cases of issue 29 finding 1, each a discrepancy
// with its own category, in the order a finance team meets them.
func TestSettlementPeriodDatesAndSecondClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m := f.fundedMerchant(t, "USD", 1_000_00)
	card := f.card(t, m.ID, "USD", 500_00).CardNo
	first := f.authorize(t, card, 1_00, "USD").AuthID // cleared on the 1st ("the 26th")
	f.clear(t, first, 1_00)
	f.advance(t, 24*time.Hour)
	c := f.authorize(t, card, 27_00, "USD").AuthID // cleared on the 2nd ("the 27th")
	f.clear(t, c, 27_00)
	f.advance(t, 24*time.Hour)
	third := f.authorize(t, card, 3_00, "USD").AuthID // cleared on the 3rd ("the 28th")
	f.clear(t, third, 3_00)

	const header = "message_id,auth_id,amount,currency,date\n"
	file := func(period string, rows ...string) string {
		return "# period: " + period + "\n" + header + strings.Join(rows, "")
	}
	row := func(msg, auth, amount, date string) string {
		return msg + "," + auth + "," + amount + ",USD," + date + "\n"
	}
	for _, tt := range []struct {
		name, fileName, file string
		status               int
		want                 map[string]string // category → what the item's detail says (line 0: the ledger's)
		counts               reconcile.SettlementCounts
	}{
		{"an empty file while the ledger has the day's clearing", "empty-02.csv", file("2030-03-02"), 1,
			map[string]string{"empty_file": "the file has no rows, but the ledger has 1 clearings in the period 2030-03-02",
				"missing_in_file": "cleared in the ledger on 2030-03-02"},
			reconcile.SettlementCounts{EmptyFile: 1, MissingInFile: 1}},
		{"the 2nd's clearing, dated the 2nd, in a file for the 1st", "day-01.csv",
			file("2030-03-01", row("n1", first, "1.00", "2030-03-01"), row("n2", c, "27.00", "2030-03-02")), 1,
			map[string]string{"outside_period": "dated 2030-03-02, outside the file's period 2030-03-01"},
			reconcile.SettlementCounts{Matched: 1, OutsidePeriod: 1}},
		{"the 2nd's clearing, dated the 1st, in a file for the 1st", "day-01b.csv",
			file("2030-03-01", row("n1", first, "1.00", "2030-03-01"), row("n2", c, "27.00", "2030-03-01")), 1,
			map[string]string{"date_differs": "the file dates it 2030-03-01, the ledger cleared it on 2030-03-02, outside the file's period"},
			reconcile.SettlementCounts{Matched: 1, DateDiffers: 1}},
		{"the 2nd's clearing, dated the 3rd, in a file for the 3rd", "day-03.csv",
			file("2030-03-03", row("n3", third, "3.00", "2030-03-03"), row("n2", c, "27.00", "2030-03-03")), 1,
			map[string]string{"date_differs": "the file dates it 2030-03-03, the ledger cleared it on 2030-03-02"},
			reconcile.SettlementCounts{Matched: 1, DateDiffers: 1}},
		{"the 2nd's file, right", "day-02.csv", file("2030-03-02", row("n2", c, "27.00", "2030-03-02")), 0,
			nil, reconcile.SettlementCounts{Matched: 1}},
		{"the same file again: the same run", "day-02-copy.csv", file("2030-03-02", row("n2", c, "27.00", "2030-03-02")), 0,
			nil, reconcile.SettlementCounts{Matched: 1}},
		{"another file for the 2nd billing the clearing again", "day-02-resent.csv",
			file("2030-03-02", row("n2-again", c, "27.00", "2030-03-02")), 1,
			map[string]string{"already_reconciled": "already reconciled by day-02.csv (sha256 "},
			reconcile.SettlementCounts{AlreadyReconciled: 1}},
		{"the 3rd's file billing the 2nd's clearing too", "day-03-fixed.csv",
			file("2030-03-03", row("n3", third, "3.00", "2030-03-03"), row("n2", c, "27.00", "2030-03-03")), 1,
			map[string]string{"already_reconciled": "line 3, recorded "},
			reconcile.SettlementCounts{Matched: 1, AlreadyReconciled: 1}},
		{"a quiet day: no rows, no clearings", "day-10.csv", file("2030-03-10"), 0, nil, reconcile.SettlementCounts{}},
	} {
		rep, err := f.reconcile(ctx, tt.fileName, tt.file, reconcile.Period{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rep.Counts != tt.counts || rep.Verdict.Status != tt.status {
			t.Errorf("%s: counts %+v, verdict %+v; want %+v and exit status %d", tt.name, rep.Counts, rep.Verdict, tt.counts, tt.status)
		}
		for cat, detail := range tt.want {
			found := false
			for _, it := range rep.Items {
				found = found || (it.Category == cat && strings.Contains(it.Detail, detail))
			}
			if !found {
				t.Errorf("%s: no %s item saying %q in %+v", tt.name, cat, detail, rep.Items)
			}
		}
		if (tt.status == 0) != (rep.Recorded != nil) {
			t.Errorf("%s: recorded %+v with exit status %d", tt.name, rep.Recorded, tt.status)
		}
	}

	// Run again, byte for byte, the file recorded above is reported as
	// already recorded under its first run, not as billed twice.
	again, err := f.reconcile(ctx, "day-02.csv", file("2030-03-02", row("n2", c, "27.00", "2030-03-02")), reconcile.Period{})
	if err != nil || !again.OK() || !again.AlreadyRecorded || again.Recorded == nil || again.Recorded.FileName != "day-02.csv" ||
		!strings.HasPrefix(again.RecordLine(), "Already recorded: this file was reconciled as run ") {
		t.Errorf("the same file again: %v, %+v", err, again)
	}
	// An old file without a period line, with the period given (--day).
	day2 := reconcile.Period{From: time.Date(2030, 3, 2, 0, 0, 0, 0, time.UTC), To: time.Date(2030, 3, 2, 0, 0, 0, 0, time.UTC)}
	old, err := f.reconcile(ctx, "old.csv", header+row("n2", c, "27.00", "2030-03-02")+"\n", day2)
	if err != nil || old.Counts.AlreadyReconciled != 1 || old.From != "2030-03-02" {
		t.Errorf("a file without a period line, --day given: %v, %+v", err, old)
	}
}

// A test merchant's clearing and authorization are named as such, not "no
// such authorization"; they are never the ledger's side of a period.
func TestSettlementNamesTestMerchants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m, _, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Sandbox shop", Currencies: []string{"USD"}, Test: true})
	if err != nil {
		t.Fatal(err)
	}
	f.deposit(t, m.ID, "USD", 100_00)
	card := f.card(t, m.ID, "USD", 50_00).CardNo
	cleared := f.authorize(t, card, 5_00, "USD").AuthID
	f.clear(t, cleared, 5_00)
	open := f.authorize(t, card, 2_00, "USD").AuthID
	rep, err := f.reconcile(ctx, "sandbox.csv", "# period: 2030-03-01\nmessage_id,auth_id,amount,currency,date\n"+
		"n1,"+cleared+",5.00,USD,2030-03-01\nn2,"+open+",2.00,USD,2030-03-01\n", reconcile.Period{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts != (reconcile.SettlementCounts{TestMerchant: 2}) || rep.Verdict.Status != reconcile.ExitDiscrepancies {
		t.Fatalf("counts %+v, verdict %+v", rep.Counts, rep.Verdict)
	}
	for _, it := range rep.Items {
		if it.ShopNo != m.ShopNo || !strings.Contains(it.Detail, "a test merchant's authorization (shop "+m.ShopNo+")") {
			t.Errorf("item %+v does not name the test merchant", it)
		}
	}
	if len(rep.Totals) != 1 || rep.Totals[0].LedgerRows != 0 {
		t.Errorf("a test merchant's clearing counted on the ledger's side: %+v", rep.Totals)
	}
}
