package reconcile_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/reconcile"
)

// railFixture: remittances of one merchant on the fixture's first day — one
// SETTLED (USD), one RETURNED (KWD), one REJECTED by screening (never the
// rail's), one still IN_FLIGHT.
type railFixture struct {
	*fixture
	settled, returned, rejected, inFlight string
}

func newRailFixture(t *testing.T) *railFixture {
	t.Helper()
	f := newFixture(t)
	m := f.merchant(t, "USD", "KWD")
	f.deposit(t, m.ID, "USD", 1_000_00)
	f.deposit(t, m.ID, "KWD", 100_000)
	ctx := context.Background()
	ben, _ := json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE", "bank_swift": "COBADEFFXXX",
		"account_no": "DE89370400440532013000"})
	create := func(cur string, amount, fee int64) string {
		r, err := f.l.Remit.CreateRemittance(ctx, m.ID, remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: ben,
			Amount: amount, Fee: fee, Currency: cur, Purpose: "SUPP", Rail: "SWIFT"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.TxID
	}
	step := func(tx string, path ...string) {
		for i := 1; i < len(path); i++ {
			if _, _, err := f.l.Remit.TransitionRemittance(ctx, m.ID, remittance.RemittanceTransition{TxID: tx, From: path[i-1],
				To: path[i], Reason: "AC04", NextActionAt: f.now.Load().Add(time.Hour)}, nil); err != nil {
				t.Fatalf("%s → %s: %v", path[i-1], path[i], err)
			}
		}
	}
	r := &railFixture{fixture: f, settled: create("USD", 100_00, 1_50), returned: create("KWD", 7_125, 250),
		rejected: create("USD", 20_00, 50), inFlight: create("USD", 5_00, 0)}
	step(r.settled, remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitInFlight, remittance.RemitSettled)
	step(r.returned, remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitInFlight, remittance.RemitReturned)
	step(r.rejected, remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitRejected)
	step(r.inFlight, remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitInFlight)
	f.advance(t, 48*time.Hour)
	return r
}

func (r *railFixture) reconcile(rec *reconcile.Records, file string) (*reconcile.RailReport, error) {
	return reconcile.Rail(context.Background(), r.l.RailEntries(), rec, reconcile.RailInput{
		File: strings.NewReader(file), Name: "rail.csv", Actor: "test"})
}

const railHeaderLine = "tx_id,status,amount,fee,currency,date\n"

func TestRailReportCategories(t *testing.T) {
	r := newRailFixture(t)
	head := "# period: 2030-03-01\n" + railHeaderLine
	settled := r.settled + ",SETTLED,100.00,1.50,USD,2030-03-01\n"
	returned := r.returned + ",RETURNED,7.125,0.250,KWD,2030-03-01\n"
	runCategoryCases(t, []categoryCase{
		{"every settlement and return", head + settled + returned, nil, 2, ""},
		{"a return reported settled", head + settled + r.returned + ",SETTLED,7.125,0.250,KWD,2030-03-01\n",
			map[string]int64{"status_differs": 1}, 1, "the ledger booked REMIT_RETURN"},
		{"another amount", head + r.settled + ",SETTLED,100.01,1.50,USD,2030-03-01\n" + returned,
			map[string]int64{"amount_differs": 1}, 1, "rail − ledger = 0.01 USD"},
		{"another fee, by one fils", head + settled + r.returned + ",RETURNED,7.125,0.251,KWD,2030-03-01\n",
			map[string]int64{"fee_differs": 1}, 1, "the remittance's fee is 0.250 KWD"},
		{"another day", "# period: 2030-03-01/2030-03-02\n" + railHeaderLine + r.settled + ",SETTLED,100.00,1.50,USD,2030-03-02\n" + returned,
			map[string]int64{"date_differs": 1}, 1, "booked it on 2030-03-01"},
		{"outside the period", head + r.settled + ",SETTLED,100.00,1.50,USD,2030-02-28\n" + returned,
			map[string]int64{"outside_period": 1}, 1, "outside the report's period"},
		{"a return missing", head + settled, map[string]int64{"missing_in_file": 1}, 1, "REMIT_RETURN booked on 2030-03-01"},
		{"one still in flight", head + settled + returned + r.inFlight + ",SETTLED,5.00,0,USD,2030-03-01\n",
			map[string]int64{"missing_in_ledger": 1}, 2, "IN_FLIGHT"},
		{"one rejected by screening", head + settled + returned + r.rejected + ",RETURNED,20.00,0.50,USD,2030-03-01\n",
			map[string]int64{"missing_in_ledger": 1}, 2, "REJECTED"},
		{"an unknown remittance", head + settled + returned + "rmt_00000000000000000000,SETTLED,1.00,0,USD,2030-03-01\n",
			map[string]int64{"missing_in_ledger": 1}, 2, "no such remittance"},
		{"twice", head + settled + settled + returned, map[string]int64{"duplicate_in_file": 1}, 2, "already on line 3"},
		{"an unknown status", head + settled + r.returned + ",PAID,7.125,0.250,KWD,2030-03-01\n", map[string]int64{"invalid_row": 1}, 1, "status"},
		{"a negative fee", head + settled + r.returned + ",RETURNED,7.125,-0.250,KWD,2030-03-01\n", map[string]int64{"invalid_row": 1}, 1, "fee"},
		{"only the header", head, map[string]int64{"empty_file": 1, "missing_in_file": 2}, 0, "truncated export"},
	}, func(file string) (reportCase, error) {
		rep, err := r.reconcile(nil, file)
		if err != nil {
			return reportCase{}, err
		}
		return caseOf(rep.Items, func(it reconcile.RailItem) (string, string) { return it.Category, it.Detail }, rep.Counts.Matched,
			rep.Verdict, rep.WriteText), nil
	})
}

// TestRailReportRecords: a matched report is recorded; another report of
// the same outcomes, in another run, is already_reconciled; a Latin-1 byte
// is exit status 2 naming the line and byte.
func TestRailReportRecords(t *testing.T) {
	r := newRailFixture(t)
	body := railHeaderLine + r.settled + ",SETTLED,100.00,1.50,USD,2030-03-01\n" + r.returned + ",RETURNED,7.125,0.250,KWD,2030-03-01\n"
	rep, err := r.reconcile(reconcile.NewRecords(r.db.DB), "# period: 2030-03-01\n"+body)
	if err != nil || rep.Verdict.Status != reconcile.ExitMatched || rep.Recorded == nil || rep.Recorded.Kind != reconcile.KindRailRemittance {
		t.Fatalf("first report: %+v, %v", rep, err)
	}
	if tot := rep.Totals; len(tot) != 2 || tot[0].Currency != "KWD" || tot[0].MatchedAmount != "7.125" || tot[1].LedgerAmount != "100.00" {
		t.Errorf("totals %+v", tot)
	}
	second, err := r.reconcile(reconcile.NewRecords(r.db.DB), "# period: 2030-03-01/2030-03-01\n"+body)
	if err != nil || second.Counts.AlreadyReconciled != 2 || second.Verdict.Status != reconcile.ExitDiscrepancies {
		t.Fatalf("a second report: %+v, %v", second, err)
	}
	_, err = r.reconcile(nil, "# period: 2030-03-01\n"+railHeaderLine+"rmt_caf\xe9,SETTLED,1.00,0,USD,2030-03-01\n")
	if !reconcile.IsUnusable(err) || !strings.HasPrefix(err.Error(), "rail report, line 3: byte 8 (0xE9) is not UTF-8") {
		t.Fatalf("a Latin-1 report: %v", err)
	}
}
