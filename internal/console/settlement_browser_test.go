package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/network"
)

// Settlement reconciliation from the page: the network's file uploaded,
// matched against the ledger's CARD_SETTLE entries by reconcile.Settlement
// (the CLI's), each category shown.

// authorizeAndClear makes a cleared authorization of minor on card and
// returns its id.
func (f *fixture) authorizeAndClear(t *testing.T, card, msg string, minor int64, clear bool) string {
	t.Helper()
	res, err := f.g.Network.Authorize(t.Context(), network.AuthRequest{MessageID: msg + "-auth", CardNo: card, Amount: minor,
		Currency: "USD", MerchantName: "Coffee", MCC: "5814", MerchantCountry: "US"})
	if err != nil || !res.Approved {
		t.Fatalf("Authorize: %+v, %v", res, err)
	}
	if clear {
		if _, err := f.g.Network.Clear(t.Context(), network.ClearRequest{MessageID: msg + "-clear", AuthID: res.AuthID, Amount: minor}); err != nil {
			t.Fatalf("Clear: %v", err)
		}
	}
	return res.AuthID
}

func TestSettlementReconciliationPage(t *testing.T) {
	f := newFixture(t)
	card := f.cardsA[0]
	matched := f.authorizeAndClear(t, card, "m1", 10_00, true)
	differs := f.authorizeAndClear(t, card, "m2", 5_00, true)
	lacking := f.authorizeAndClear(t, card, "m3", 2_00, true) // cleared, not in the file
	day := f.g.Now().UTC().Format("2006-01-02")
	file := strings.Join([]string{
		"# period: " + day,
		"message_id,auth_id,amount,currency,date",
		"net-1," + matched + ",10.00,USD," + day,
		"net-2," + differs + ",6.00,USD," + day,
		"net-3,auth_doesnotexist000000000,1.00,USD," + day,
		"net-4," + matched + ",10.00,USD," + day,
		"net-5,auth_x,1.005,USD," + day,
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "settlement.csv")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	b.login(t, f, "aldo.auditor", f.code(t, "aldo.auditor"))
	b.open(t, f.url("/audit/settlement"))
	b.do(t, chromedp.SetUploadFiles(chromedp.ID("file"), []string{path}), chromedp.Click(chromedp.ID("reconcile")))
	b.waitJS(t, `!!document.querySelector('#settlement-result')`)
	if s := b.text(t, "#settlement-counts tbody"); strings.Join(strings.Fields(s), " ") != "1 1 0 0 0 0 1 1 1 1 0" {
		t.Errorf("counts: %q", s)
	}
	// The CLI's verdict and exit status, and its totals: file against ledger.
	if s := b.text(t, "#settlement-result"); s != "DISCREPANCIES: 5 of 6 rows and ledger items need attention (exit status 1)" {
		t.Errorf("verdict: %q", s)
	}
	if s := strings.Join(strings.Fields(b.text(t, `#settlement-totals tr[data-currency="USD"]`)), " "); s != "USD 3 17.00 3 17.00 0.00 1 10.00" {
		t.Errorf("totals: %q", s)
	}
	for cat, want := range map[string]string{"amount_differs": differs, "missing_in_file": lacking, "missing_in_ledger": "auth_doesnotexist000000000",
		"duplicate_in_file": matched, "invalid_row": "net-5"} {
		if s := b.text(t, `#settlement-items tr[data-category="`+cat+`"]`); !strings.Contains(s, want) {
			t.Errorf("%s row: %q lacks %s", cat, s, want)
		}
	}
	if s := b.text(t, "#settlement-span"); !strings.Contains(s, "5 rows; period "+day+" to "+day) {
		t.Errorf("span: %q", s)
	}
	b.shot(t, "settlement")

	// A file that is not a settlement file: 400, naming it.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.open(t, f.url("/audit/settlement"))
	b.do(t, chromedp.SetUploadFiles(chromedp.ID("file"), []string{bad}), chromedp.Click(chromedp.ID("reconcile")))
	b.waitJS(t, `!!document.querySelector('#settlement-result')`)
	if s := b.text(t, "#settlement-result"); s != "UNUSABLE: settlement file, line 1: the header must be message_id,auth_id,amount,currency,date (exit status 2)" {
		t.Errorf("a wrong file: %q", s)
	}

	// A file of the old format, its period given in the form, that
	// matches: the verdict is the CLI's, and the run is recorded.
	good := filepath.Join(t.TempDir(), "good.csv")
	if err := os.WriteFile(good, []byte("message_id,auth_id,amount,currency,date\nnet-1,"+matched+",10.00,USD,"+day+"\nnet-2,"+differs+
		",5.00,USD,"+day+"\nnet-3,"+lacking+",2.00,USD,"+day+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.open(t, f.url("/audit/settlement"))
	b.do(t, chromedp.SetValue(chromedp.ID("from"), day), chromedp.SetValue(chromedp.ID("to"), day),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{good}), chromedp.Click(chromedp.ID("reconcile")))
	b.waitJS(t, `!!document.querySelector('#settlement-result')`)
	if s := b.text(t, "#settlement-result"); !strings.HasPrefix(s, "MATCHED: every row matched") || !strings.HasSuffix(s, "(exit status 0)") {
		t.Errorf("a matching file: %q", s)
	}
	if s := b.text(t, "#settlement-recorded"); !strings.HasPrefix(s, "Recorded: run ") || !strings.HasSuffix(s, "3 clearings, by console:aldo.auditor") {
		t.Errorf("recorded: %q", s)
	}
	// A file past the page's bound is refused as such, not as a token.
	got := eval[int](t, b, `(() => { const fd = new FormData(); fd.append('csrf', document.querySelector('input[name=csrf]').value);
		fd.append('file', new Blob([new Uint8Array(9 << 20)]), 'big.csv');
		return fetch('/audit/settlement', {method: 'POST', body: fd}).then(r => r.status); })()`)
	if got != 413 {
		t.Errorf("a 9 MiB file: %d, want 413", got)
	}
	acts := strings.Join(f.auditActions(t), " ")
	if !strings.Contains(acts, "settlement.reconcile:failed") {
		t.Errorf("audit trail %s lacks the reconciliation", acts)
	}
}
