package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/remittance"
)

// remit makes a EUR remittance of merchant through the domain and moves it
// through the given statuses (the last one with reason).
func (f *fixture) remit(t *testing.T, merchant int64, account, reason string, to ...string) string {
	t.Helper()
	ctx := context.Background()
	b, _ := json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE", "bank_swift": "COBADEFFXXX", "account_no": account})
	r, err := f.g.Remit.CreateRemittance(ctx, merchant, remittance.RemittanceInput{PayerID: "payer-7", Beneficiary: b,
		Amount: 100_00, Fee: 55, Currency: "EUR", Purpose: "SUPP", Rail: "SEPA"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := remittance.RemitSubmitted
	for _, st := range to {
		tr := remittance.RemittanceTransition{TxID: r.TxID, From: from, To: st}
		switch st {
		case remittance.RemitSettled, remittance.RemitReturned, remittance.RemitRejected:
			tr.Reason = reason
		default:
			tr.NextActionAt = f.clock.Now().Add(time.Hour) // no worker here takes it
		}
		if _, moved, err := f.g.Remit.TransitionRemittance(ctx, merchant, tr, nil); err != nil || !moved {
			t.Fatalf("%s → %s: moved %v, %v", from, st, moved, err)
		}
		from = st
	}
	return r.TxID
}

// A merchant's remittances: the list newest first, filtered by status and
// paged by key; one remittance with every step of its lifecycle; another
// merchant's remittance answered as an unknown one.
func TestRemittancePages(t *testing.T) {
	t.Cleanup(console.UseRemitPage(2))
	f := newFixture(t)
	gatewaytest.Deposit(t, f.g.Ledger, f.b.ID, "EUR", 100_000) // A has EUR; B has only USD
	settled := f.remit(t, f.a.ID, "DE89370400440532013000", "", remittance.RemitScreening, remittance.RemitInFlight, remittance.RemitSettled)
	returned := f.remit(t, f.a.ID, "DE89370400440532010000", "AC01", remittance.RemitScreening, remittance.RemitInFlight, remittance.RemitReturned)
	fresh := f.remit(t, f.a.ID, "DE89370400440532019999", "")
	gatewayB := f.remit(t, f.b.ID, "DE89370400440532018888", "")
	b := newBrowser(t)
	b.login(t, f, "fred.finance", "")

	// Newest first, two a page: fresh, returned; then settled.
	b.open(t, f.url("/remittances"))
	rows := func() string {
		return eval[string](t, b, `[...document.querySelectorAll('#remittances tbody tr[data-tx]')].map(r => r.dataset.tx).join(',')`)
	}
	if got, want := rows(), fresh+","+returned; got != want {
		t.Fatalf("first page %s, want %s", got, want)
	}
	b.shot(t, "remittances")
	href := eval[string](t, b, `document.querySelector('#next').getAttribute('href')`)
	b.open(t, f.url(href))
	if got := rows(); got != settled {
		t.Fatalf("second page %s, want %s", got, settled)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#next').length`); n != 0 {
		t.Error("the last page links to a next one")
	}
	// The filter, and values the page refuses naming the field.
	b.open(t, f.url("/remittances?status=RETURNED"))
	if got := rows(); got != returned {
		t.Errorf("RETURNED lists %s", got)
	}
	for q, field := range map[string]string{"status=LOST": "status", "before=rmt_x": "before", "before=" + gatewayB: ""} {
		got := b.open(t, f.url("/remittances?"+q))
		switch {
		case field != "" && (got != 400 || !strings.Contains(b.text(t, "#error"), field)):
			t.Errorf("%s: %d %q", q, got, b.text(t, "#error"))
		case field == "" && (got != 200 || rows() != ""):
			// Another merchant's txId as the cursor starts nowhere.
			t.Errorf("%s: %d, lists %q", q, got, rows())
		}
	}

	// The detail: amounts as stored, every step with its time and reason.
	b.open(t, f.url("/remittances/"+returned))
	for sel, want := range map[string]string{"#remit-status": "RETURNED (AC01)", "#remit-amount": "100.00 EUR",
		"#remit-fee": "0.55 EUR", "#remit-total": "100.55 EUR from the EUR funding account", "#remit-beneficiary": "Hans Muster GmbH · DE · account ••••0000 · COBADEFFXXX"} {
		if got := b.text(t, sel); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	steps := eval[string](t, b, `[...document.querySelectorAll('#lifecycle tbody tr')].map(r => r.children[1].textContent + ':' + r.children[4].textContent + ':' + (r.children[2].textContent !== '')).join(',')`)
	if want := "SUBMITTED::true,SCREENING::true,IN_FLIGHT::true,RETURNED:AC01:true"; steps != want {
		t.Errorf("lifecycle %s, want %s", steps, want)
	}
	if strings.Contains(eval[string](t, b, `document.body.textContent`), "DE89370400440532010000") {
		t.Error("the page shows the whole account number")
	}
	b.shot(t, "remittance")

	// Another merchant's remittance is an unknown one: the same 404 page.
	unknown := "rmt_" + strings.Repeat("0", 20)
	var pages []string
	for _, id := range []string{gatewayB, unknown} {
		if got := b.open(t, f.url("/remittances/"+id)); got != 404 {
			t.Errorf("/remittances/%s: %d, want 404", id, got)
		}
		pages = append(pages, eval[string](t, b, `document.querySelector('main').outerHTML`))
	}
	if pages[0] != pages[1] {
		t.Errorf("another merchant's remittance and an unknown one differ:\n%s\n%s", pages[0], pages[1])
	}
	// The house sees no merchant's remittances.
	o := newBrowser(t)
	o.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	if got := o.open(t, f.url("/remittances")); got != 403 {
		t.Errorf("operator on /remittances: %d, want 403", got)
	}
}
