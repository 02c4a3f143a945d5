package remittance_test

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

func remitInput(account string) remittance.RemittanceInput {
	b, _ := json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE",
		"bank_swift": "COBADEFFXXX", "account_no": account})
	return remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: b, Amount: 1_000_00, Fee: 5_00,
		Currency: "EUR", Purpose: "SUPP", Rail: "SEPA"}
}

func newRemitWorker(l *gatewaytest.Gateway, manual bool) *remittance.Lifecycle {
	return remittance.NewLifecycle(l.Remit, remittance.LifecycleConfig{Rail: &railsim.SimulatedRail{
		ReturnPattern: regexp.MustCompile(`^DE0+`), ReturnReason: "AC01", Manual: manual, Now: time.Now,
	}})
}

// steps runs the worker until nothing moves.
func steps(t *testing.T, w *remittance.Lifecycle) {
	t.Helper()
	for i := 0; i < 10; i++ {
		n, err := w.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func TestRemittanceLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "EUR")
	other := newMerchant(t, l, "EUR")
	deposit(t, l, m.ID, "EUR", 5_000_00)

	// Settled: amount to the rail, fee kept.
	settled, err := l.Remit.CreateRemittance(ctx, m.ID, remitInput("DE89370400440532013000"), nil)
	if err != nil || settled.Status != remittance.RemitSubmitted {
		t.Fatalf("create: %+v %v", settled, err)
	}
	if got := fundingBalance(t, l, m.ID, "EUR"); got != 3_995_00 {
		t.Fatalf("funding after create %d", got)
	}
	// Returned: the amount comes back, the fee does not.
	returned, err := l.Remit.CreateRemittance(ctx, m.ID, remitInput("DE00000000000000000000"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rejected by screening: amount and fee come back.
	if _, err := l.Remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: "Evil Corp Ltd", Country: "DE"}}); err != nil {
		t.Fatal(err)
	}
	in := remitInput("DE89370400440532013000")
	in.Beneficiary, _ = json.Marshal(map[string]string{"name": "EVIL CORP", "country": "DE", "bank_swift": "COBADEFFXXX", "account_no": "DE89370400440532013000"})
	rejected, err := l.Remit.CreateRemittance(ctx, m.ID, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps(t, newRemitWorker(l, false))

	for _, tt := range []struct {
		txID, status, reason string
		history              int
	}{
		{settled.TxID, remittance.RemitSettled, "", 4},
		{returned.TxID, remittance.RemitReturned, "AC01", 4},
		{rejected.TxID, remittance.RemitRejected, "sanctions screening: EVIL CORP LTD (DE)", 3},
	} {
		r, err := l.Remit.Remittance(ctx, m.ID, tt.txID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != tt.status || len(r.History) != tt.history || (tt.reason != "" && r.Reason == "") {
			t.Errorf("%s: %+v", tt.status, r)
		}
		if tt.status == remittance.RemitSettled && r.SettledAt == nil {
			t.Errorf("settled without settledAt")
		}
	}
	// 5,000 − (1,000 + 5) settled − 5 (fee of the returned) = 3,990.
	if got := fundingBalance(t, l, m.ID, "EUR"); got != 3_990_00 {
		t.Fatalf("funding after the lifecycle %d", got)
	}
	_, err = l.Remit.Remittance(ctx, other.ID, settled.TxID)
	wantCode(t, err, postings.ENOTFOUND, "remittance")
	var events int
	_ = l.DB().NewRaw(`select count(*) from events where event_type = 'remittance.status'`).Scan(ctx, &events)
	if events != 3+3+2 {
		t.Fatalf("%d remittance.status events, want 8", events)
	}
	mustVerify(t, l)
}

func TestRemittanceRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "EUR")
	deposit(t, l, m.ID, "EUR", 100_00)
	_, err := l.Remit.CreateRemittance(ctx, m.ID, remitInput("DE89370400440532013000"), nil)
	wantCode(t, err, postings.EINSUFFICIENT, "")
	in := remitInput("DE89370400440532013000")
	in.Amount = 1_000_000_00
	_, err = l.Remit.CreateRemittance(ctx, m.ID, in, nil)
	wantCode(t, err, postings.ELIMIT, "remittance_max")
	in.Currency = "USD"
	_, err = l.Remit.CreateRemittance(ctx, m.ID, in, nil)
	wantCode(t, err, postings.EFORBIDDEN, "currency")
	var n int
	_ = l.DB().NewRaw(`select count(*) from remittances`).Scan(ctx, &n)
	if n != 0 || fundingBalance(t, l, m.ID, "EUR") != 100_00 {
		t.Fatalf("a refused remittance left %d rows", n)
	}
	mustVerify(t, l)
}

// Two workers racing over the same remittances never move one twice, and
// rail reports are idempotent on their message id.
func TestRemittanceWorkersRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "EUR")
	deposit(t, l, m.ID, "EUR", 100_000_00)
	var ids []string
	for i := 0; i < 20; i++ {
		in := remitInput("DE89370400440532013000")
		in.Amount = 100_00
		r, err := l.Remit.CreateRemittance(ctx, m.ID, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.TxID)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newRemitWorker(l, true) // in flight until the rail reports
			for j := 0; j < 6; j++ {
				if _, err := w.Step(ctx); err != nil {
					t.Error(err)
				}
				// Claims last 30 s; expire them so that every worker
				// competes for every step.
				_, _ = l.DB().NewRaw(`update remittances set claimed_until = null`).Exec(ctx)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		r, err := l.Remit.Remittance(ctx, m.ID, id)
		if err != nil || r.Status != remittance.RemitInFlight || len(r.History) != 3 {
			t.Fatalf("%s: %+v %v", id, r, err)
		}
	}
	// The rail reports: a repeat replays, a contradicting report is refused.
	for i := 0; i < 2; i++ {
		if r, err := l.Remit.ReportRemittance(ctx, "rail-1", ids[0], remittance.RemitSettled, ""); err != nil || r.Status != remittance.RemitSettled {
			t.Fatalf("report %d: %+v %v", i, r, err)
		}
	}
	_, err := l.Remit.ReportRemittance(ctx, "rail-2", ids[0], remittance.RemitReturned, "AC04")
	wantCode(t, err, postings.ESTATE, "remittance_state")
	var settles int
	_ = l.DB().NewRaw(`select count(*) from entries where kind = 'REMIT_SETTLE'`).Scan(ctx, &settles)
	if settles != 1 {
		t.Fatalf("%d settlements", settles)
	}
	mustVerify(t, l)
}
