package console_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/network"
)

// TestRefundReportPage: the network's refund file from the page, as
// `gateway reconcile refunds` — a quiet period matches (exit status 0), a
// refund the ledger lacks is missing_in_ledger (1), a Latin-1 byte is
// UNUSABLE (2) naming its line and byte without the byte on the page; a
// real refund's row matches and is recorded, so a second file claiming it
// is already_reconciled, its ledger entry linked; each upload is a refunds.reconcile row of the
// trail; a merchant's user may not use the page.
func TestRefundReportPage(t *testing.T) {
	f := newFixture(t)
	aud := f.httpLogin(t, "aldo.auditor")
	head := "# period: 2001-02-03\nmessage_id,card_no,amount,currency,date\n"
	for _, tc := range []struct {
		name, body string
		status     int
		want       []string
	}{
		{"quiet period", head, http.StatusOK, []string{`id="refund-result" data-exit-status="0"`, `id="refund-counts"`}},
		{"unknown refund", head + "net-nowhere-1," + f.cardsA[0] + ",1.00,USD,2001-02-03\n", http.StatusOK,
			[]string{`data-exit-status="1"`, `data-category="missing_in_ledger"`, "net-nowhere-1", `id="refund-totals"`}},
		{"Latin-1 byte", head + "net-caf\xe9," + f.cardsA[0] + ",1,USD,2001-02-03\n", http.StatusBadRequest,
			[]string{`data-exit-status="2"`, "refund file, line 3: byte 8 (0xE9)"}},
	} {
		status, page := f.upload(t, aud, "/audit/refunds", nil, "refunds.csv", tc.body)
		if status != tc.status || strings.Contains(page, "\xe9") {
			t.Errorf("%s: %d, want %d:\n%s", tc.name, status, tc.status, page)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page lacks %q:\n%s", tc.name, w, page)
			}
		}
	}

	// A refund the network sent (of a cleared purchase: a refund is bounded
	// by what was captured): its row matches and the file is recorded;
	// another file naming it again is the second claim.
	f.authorizeAndClear(t, f.cardsA[0], "net-page-p1", 20_00, true)
	if _, err := f.g.Network.Refund(t.Context(), network.RefundRequest{MessageID: "net-page-r1", CardNo: f.cardsA[0],
		Amount: 5_00, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	day := f.g.Now().UTC().Format("2006-01-02")
	rows := "message_id,card_no,amount,currency,date\nnet-page-r1," + f.cardsA[0] + ",5.00,USD," + day + "\n"
	op := f.httpLogin(t, "olga.operator")
	status, page := f.upload(t, op, "/audit/refunds", nil, "first.csv", "# period: "+day+"\n"+rows)
	if status != http.StatusOK || !strings.Contains(page, `data-exit-status="0"`) || !strings.Contains(page, "Recorded: run") ||
		!strings.Contains(page, "5.00") {
		t.Fatalf("the refund's file: %d\n%s", status, page)
	}
	status, page = f.upload(t, op, "/audit/refunds", nil, "second.csv", "# period: "+day+"/"+day+"\n"+rows)
	if status != http.StatusOK || !strings.Contains(page, `data-exit-status="1"`) || !strings.Contains(page, `data-category="already_reconciled"`) ||
		!strings.Contains(page, `href="/audit/journal/`+f.a.ShopNo+`/`) {
		t.Fatalf("a second file of the refund: %d\n%s", status, page)
	}
	acts := f.auditActions(t)
	if n := len(slices.DeleteFunc(slices.Clone(acts), func(a string) bool { return !strings.HasPrefix(a, "refunds.reconcile:") })); n != 5 {
		t.Errorf("%d refunds.reconcile rows in the trail, want 5: %v", n, acts)
	}
	for _, want := range []string{"refunds.reconcile:ok", "refunds.reconcile:failed"} {
		if !slices.Contains(acts, want) {
			t.Errorf("the trail lacks %s: %v", want, acts)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.url("/audit/refunds"), nil)
	if status, _ := send(t, f.httpLogin(t, "fred.finance"), req); status != http.StatusForbidden && status != http.StatusNotFound {
		t.Fatalf("a merchant's finance user on the house's page: %d", status)
	}
}
