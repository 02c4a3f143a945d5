package console_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/merchant"
)

// uploadBank posts a bank statement to the page as client, with the page's
// CSRF token, and returns the answer.
func (f *fixture) uploadBank(t *testing.T, c *http.Client, shopNo, name, body string) (int, string) {
	t.Helper()
	return f.upload(t, c, "/audit/bank", map[string]string{"shopNo": shopNo}, name, body)
}

// upload posts a file and fields to a reconciliation page as client, with
// the page's CSRF token, and returns the answer.
func (f *fixture) upload(t *testing.T, c *http.Client, path string, fields map[string]string, name, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url(path), nil)
	status, page := send(t, c, req)
	m := csrfInputRE.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d, no CSRF token: %s", path, status, firstLine(page))
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", m[1])
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write([]byte(body))
	_ = mw.Close()
	req, _ = http.NewRequest(http.MethodPost, f.url(path), &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return send(t, c, req)
}

// TestBankStatementPage: an operator uploads a statement and sees the CLI's
// report and exit status; it is recorded, so a second statement claiming the
// same deposits is already_reconciled; a Latin-1 file is UNUSABLE (exit
// status 2) without its byte on the page; an unknown shop is a 400 naming
// the field; a merchant's user may not use the page.
func TestBankStatementPage(t *testing.T) {
	f := newFixture(t)
	// A merchant of its own: the fixture's are funded without references.
	shop, _, err := f.g.CreateMerchant(t.Context(), merchant.Spec{Name: "Bank page shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deposit.New(f.g.Ledger).Deposit(t.Context(), shop.ID, "USD", 12_345, "SEPA-PAGE-1", nil); err != nil {
		t.Fatal(err)
	}
	day := f.g.Now().UTC().Format("2006-01-02")
	lines := "value_date,amount,currency,reference\n" + day + ",123.45,USD,SEPA-PAGE-1\n"
	op := f.httpLogin(t, "olga.operator")

	status, page := f.uploadBank(t, op, shop.ShopNo, "first.csv", "# period: "+day+"\n"+lines)
	if status != http.StatusOK || !strings.Contains(page, `id="bank-result" data-exit-status="0"`) || !strings.Contains(page, "Recorded: run") ||
		!strings.Contains(page, "123.45") {
		t.Fatalf("first statement: %d\n%s", status, page)
	}
	status, page = f.uploadBank(t, op, shop.ShopNo, "second.csv", "# period: "+day+"/"+day+"\n"+lines)
	if status != http.StatusOK || !strings.Contains(page, `data-exit-status="1"`) || !strings.Contains(page, `data-category="already_reconciled"`) {
		t.Fatalf("a second statement of the deposit: %d\n%s", status, page)
	}
	status, page = f.uploadBank(t, op, shop.ShopNo, "latin1.csv", "# period: "+day+"\nvalue_date,amount,currency,reference\n"+day+",1.00,USD,caf\xe9\n")
	if status != http.StatusBadRequest || !strings.Contains(page, `data-exit-status="2"`) || !strings.Contains(page, "line 3: byte 24 (0xE9)") ||
		strings.Contains(page, "\xe9") {
		t.Fatalf("a Latin-1 statement: %d\n%s", status, page)
	}
	if status, page = f.uploadBank(t, op, "SH0000000000", "first.csv", lines); status != http.StatusBadRequest || !strings.Contains(page, "shopNo") {
		t.Fatalf("an unknown shop: %d\n%s", status, firstLine(page))
	}
	req, _ := http.NewRequest(http.MethodGet, f.url("/audit/bank"), nil)
	if status, _ := send(t, f.httpLogin(t, "fred.finance"), req); status != http.StatusForbidden && status != http.StatusNotFound {
		t.Fatalf("a merchant's finance user on the house's page: %d", status)
	}
}

// TestRailReportPage: the rail's report from the page — a quiet day matches
// (exit status 0), an unknown remittance is missing_in_ledger (1), a
// Latin-1 byte is UNUSABLE (2) without the byte on the page.
func TestRailReportPage(t *testing.T) {
	f := newFixture(t)
	op := f.httpLogin(t, "aldo.auditor")
	head := "# period: 2001-02-03\ntx_id,status,amount,fee,currency,date\n"
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{head, http.StatusOK, `id="rail-result" data-exit-status="0"`},
		{head + "rmt_00000000000000000000,SETTLED,1.00,0.10,USD,2001-02-03\n", http.StatusOK, `data-category="missing_in_ledger"`},
		{head + "rmt_\xe9,SETTLED,1,0,USD,2001-02-03\n", http.StatusBadRequest, "rail report, line 3: byte 5 (0xE9)"},
	} {
		status, page := f.upload(t, op, "/audit/rail", nil, "rail.csv", tc.body)
		if status != tc.status || !strings.Contains(page, tc.want) || strings.Contains(page, "\xe9") {
			t.Errorf("%q: %d, want %d with %q:\n%s", tc.body, status, tc.status, tc.want, page)
		}
	}
}
