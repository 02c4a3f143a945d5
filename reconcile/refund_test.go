package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/reconcile"
)

// refundFixture: on the fixture's first day, a USD card captured 30.00 and
// was refunded 5.00 twice by the network (two messages, equal refunds on
// one card and day), and a test merchant's card was refunded 1.00 by its
// sandbox.
type refundFixture struct {
	*fixture
	card, testCard, testShop string
}

func newRefundFixture(t *testing.T) *refundFixture {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	refund := func(id, card string, minor int64) {
		if _, err := f.l.Network.Refund(ctx, network.RefundRequest{MessageID: id, CardNo: card, Amount: minor, Currency: "USD"}); err != nil {
			t.Fatalf("Refund %s: %v", id, err)
		}
	}
	m := f.merchant(t, "USD")
	f.deposit(t, m.ID, "USD", 1_000_00)
	r := &refundFixture{fixture: f, card: f.card(t, m.ID, "USD", 100_00).CardNo}
	f.clear(t, f.authorize(t, r.card, 30_00, "USD").AuthID, 30_00)
	refund("net-r1", r.card, 5_00)
	refund("net-r2", r.card, 5_00)
	test, _, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Sandbox", Currencies: []string{"USD"}, Test: true})
	if err != nil {
		t.Fatal(err)
	}
	f.deposit(t, test.ID, "USD", 100_00)
	r.testCard, r.testShop = f.card(t, test.ID, "USD", 50_00).CardNo, test.ShopNo
	f.clear(t, f.authorize(t, r.testCard, 10_00, "USD").AuthID, 10_00)
	refund("sbx-r1", r.testCard, 1_00)
	f.advance(t, 48*time.Hour)
	return r
}

func (r *refundFixture) reconcile(rec *reconcile.Records, file string) (*reconcile.RefundReport, error) {
	return reconcile.Refunds(context.Background(), r.l.Refunds(), rec, reconcile.RefundInput{
		File: strings.NewReader(file), Name: "refunds.csv", Actor: "test"})
}

const refundHeaderLine = "message_id,card_no,amount,currency,date\n"

func TestRefundFileCategories(t *testing.T) {
	r := newRefundFixture(t)
	head := "# period: 2030-03-01\n" + refundHeaderLine
	row := func(id, card, amount, cur, day string) string {
		return strings.Join([]string{id, card, amount, cur, day}, ",") + "\n"
	}
	r1, r2 := row("net-r1", r.card, "5.00", "USD", "2030-03-01"), row("net-r2", r.card, "5.00", "USD", "2030-03-01")
	runCategoryCases(t, []categoryCase{
		{"every refund", head + r1 + r2, nil, 2, ""},
		{"two equal refunds, one row", head + r1, map[string]int64{"missing_in_file": 1}, 1, "the file has no row for it"},
		{"an amount one cent more", head + r1 + row("net-r2", r.card, "5.01", "USD", "2030-03-01"),
			map[string]int64{"amount_differs": 1}, 1, "file − ledger = 0.01 USD"},
		{"another currency", head + r1 + row("net-r2", r.card, "5.00", "EUR", "2030-03-01"),
			map[string]int64{"amount_differs": 1}, 1, "currency differs"},
		{"another card", head + r1 + row("net-r2", "crd_other", "5.00", "USD", "2030-03-01"),
			map[string]int64{"card_differs": 1}, 1, "the ledger refunded card " + r.card},
		{"another day", "# period: 2030-03-01/2030-03-02\n" + refundHeaderLine + r1 + row("net-r2", r.card, "5.00", "USD", "2030-03-02"),
			map[string]int64{"date_differs": 1}, 1, "booked it on 2030-03-01"},
		{"outside the period", head + r1 + row("net-r2", r.card, "5.00", "USD", "2030-02-28"),
			map[string]int64{"outside_period": 1, "missing_in_file": 0}, 1, "outside the file's period"},
		{"an unknown message", head + r1 + r2 + row("net-r9", r.card, "1.00", "USD", "2030-03-01"),
			map[string]int64{"missing_in_ledger": 1}, 2, "no refund in the ledger carries this message id"},
		{"a test merchant's refund", head + r1 + r2 + row("sbx-r1", r.testCard, "1.00", "USD", "2030-03-01"),
			map[string]int64{"test_merchant": 1}, 2, "a test merchant's refund (shop " + r.testShop + ")"},
		{"twice", head + r1 + r1 + r2, map[string]int64{"duplicate_in_file": 1}, 2, "already on line 3"},
		{"an amount of three decimals", head + r1 + row("net-r2", r.card, "5.001", "USD", "2030-03-01"),
			map[string]int64{"invalid_row": 1}, 1, "amount"},
		{"only the header", head, map[string]int64{"empty_file": 1, "missing_in_file": 2}, 0, "truncated export"},
	}, func(file string) (reportCase, error) {
		rep, err := r.reconcile(nil, file)
		if err != nil {
			return reportCase{}, err
		}
		return caseOf(rep.Items, func(it reconcile.RefundItem) (string, string) { return it.Category, it.Detail }, rep.Counts.Matched,
			rep.Verdict, rep.WriteText), nil
	})
}

// TestRefundFileRecords: a matched file is recorded, totals first; another
// file of the same refunds, in another run, is already_reconciled; the
// same file again is its earlier run; a file without a period, or with a
// Latin-1 byte, is exit status 2 naming what is wrong.
func TestRefundFileRecords(t *testing.T) {
	r := newRefundFixture(t)
	body := refundHeaderLine + "net-r1," + r.card + ",5.00,USD,2030-03-01\nnet-r2," + r.card + ",5.00,USD,2030-03-01\n"
	rec := reconcile.NewRecords(r.db.DB)
	rep, err := r.reconcile(rec, "# period: 2030-03-01\n"+body)
	if err != nil || rep.Verdict.Status != reconcile.ExitMatched || rep.Recorded == nil || rep.Recorded.Kind != reconcile.KindNetworkRefund ||
		rep.Recorded.Items != 2 {
		t.Fatalf("first file: %+v, %v", rep, err)
	}
	if tot := rep.Totals; len(tot) != 1 || tot[0].Currency != "USD" || tot[0].FileAmount != "10.00" || tot[0].LedgerAmount != "10.00" ||
		tot[0].LedgerRows != 2 || tot[0].MatchedAmount != "10.00" {
		t.Errorf("totals %+v", tot)
	}
	var out strings.Builder
	if err := rep.WriteText(&out); err != nil || !strings.Contains(out.String(), "LEDGER REFUNDS") {
		t.Errorf("text: %v\n%s", err, out.String())
	}
	again, err := r.reconcile(rec, "# period: 2030-03-01\n"+body)
	if err != nil || again.Verdict.Status != reconcile.ExitMatched || !again.AlreadyRecorded {
		t.Fatalf("the same file again: %+v, %v", again, err)
	}
	second, err := r.reconcile(rec, "# period: 2030-03-01/2030-03-01\n"+body)
	if err != nil || second.Counts.AlreadyReconciled != 2 || second.Verdict.Status != reconcile.ExitDiscrepancies ||
		!strings.Contains(second.Items[0].Detail, "already reconciled by refunds.csv") {
		t.Fatalf("a second file: %+v, %v", second, err)
	}
	if _, err := r.reconcile(nil, body); !reconcile.IsUnusable(err) || !strings.HasPrefix(err.Error(), "refund file") {
		t.Fatalf("no period: %v", err)
	}
	_, err = r.reconcile(nil, "# period: 2030-03-01\n"+refundHeaderLine+"net-caf\xe9,"+r.card+",1.00,USD,2030-03-01\n")
	if !reconcile.IsUnusable(err) || !strings.HasPrefix(err.Error(), "refund file, line 3: byte 8 (0xE9) is not UTF-8") {
		t.Fatalf("a Latin-1 file: %v", err)
	}
}

// A refund booked before refunds kept the network's message id (its
// network_refunds row absent, as on a database upgraded in place) is still
// on the ledger's side of its period: missing_in_file, saying why, and a
// row naming its message id finds no refund.
func TestRefundFileOldRefunds(t *testing.T) {
	r := newRefundFixture(t)
	if _, err := r.db.ExecContext(context.Background(), `delete from network_refunds where message_id = 'net-r2'`); err != nil {
		t.Fatal(err)
	}
	rep, err := r.reconcile(nil, "# period: 2030-03-01\n"+refundHeaderLine+
		"net-r1,"+r.card+",5.00,USD,2030-03-01\nnet-r2,"+r.card+",5.00,USD,2030-03-01\n")
	if err != nil {
		t.Fatal(err)
	}
	checkReportCase(t, caseOf(rep.Items, func(it reconcile.RefundItem) (string, string) { return it.Category, it.Detail },
		rep.Counts.Matched, rep.Verdict, rep.WriteText), map[string]int64{"missing_in_ledger": 1, "missing_in_file": 1}, 1,
		"no refund in the ledger carries this message id")
	if d := rep.Items[1].Detail; rep.Items[1].Category != "missing_in_file" || !strings.Contains(d, "before refunds kept the network's message id") {
		t.Errorf("the old refund: %+v", rep.Items[1])
	}
	if tot := rep.Totals; len(tot) != 1 || tot[0].LedgerRows != 2 || tot[0].LedgerAmount != "10.00" {
		t.Errorf("totals %+v: the old refund is on the ledger's side", tot)
	}
}
