package console_test

import (
	"context"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/reconcile"
)

// The house's pages for the CLI's last commands: a merchant's statement for
// auditors and operators (audit statement, reconcile.Statement) and the
// sanctions list for operators (sanctions load, rules.ParseSanctionsList and
// remittance.Service.ReplaceSanctions), each with its refusals.

// getPage fetches path with GET from the page and returns the status and
// the body.
func (b *browser) getPage(t *testing.T, path string) (int, string) {
	t.Helper()
	s := eval[string](t, b, "fetch("+jsString(path)+", {redirect: 'manual'}).then(async r => r.status + '\\n' + await r.text())")
	code, body, _ := strings.Cut(s, "\n")
	n, err := strconv.Atoi(code)
	if err != nil {
		t.Fatalf("get %s: status %q", path, code)
	}
	return n, body
}

// cliStatement is what `gateway audit statement` reports for the merchant
// over the day: the same function, called as the CLI calls it.
func (f *fixture) cliStatement(t *testing.T, merchant int64, day time.Time) *reconcile.StatementReport {
	t.Helper()
	rep, err := reconcile.Statement(context.Background(), audit.New(f.g.Ledger), merchant, day, day.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAuditStatementPage(t *testing.T) {
	f := newFixture(t)
	now := f.g.Now().UTC()
	day := now.Format("2006-01-02")
	today := now.Truncate(24 * time.Hour)
	q := func(shop, from, to string) string {
		return "/audit/statement?" + url.Values{"shopNo": {shop}, "startDate": {from}, "endDate": {to}}.Encode()
	}

	b := newBrowser(t)
	b.login(t, f, "aldo.auditor", f.code(t, "aldo.auditor"))
	// The form alone first: no merchant, no report.
	b.open(t, f.url("/audit/statement"))
	if n := eval[int](t, b, `document.querySelectorAll('#statement-result').length`); n != 0 {
		t.Errorf("a report before a merchant is picked: %d", n)
	}
	b.do(t, chromedp.SendKeys(chromedp.ID("shopNo"), f.a.ShopNo), chromedp.SetValue(chromedp.ID("startDate"), day),
		chromedp.SetValue(chromedp.ID("endDate"), day), chromedp.Click(chromedp.ID("filter")))
	b.waitJS(t, `!!document.querySelector('#statement-result')`)
	if s := b.text(t, "#statement-result"); s != "Every account reconciles: opening + movements = closing." {
		t.Errorf("statement: %q", s)
	}
	if s := b.text(t, "#statement-merchant"); !strings.Contains(s, f.a.ShopNo) || !strings.Contains(s, "Acme Shop") {
		t.Errorf("heading %q does not name merchant A", s)
	}
	// The page shows what the CLI reports: every account, none mismatched.
	rep := f.cliStatement(t, f.a.ID, today)
	if !rep.OK() || len(rep.Accounts) == 0 {
		t.Fatalf("CLI statement: %+v", rep)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#statement-accounts tbody tr').length`); n != len(rep.Accounts) {
		t.Errorf("page lists %d accounts, the CLI %d", n, len(rep.Accounts))
	}
	b.shot(t, "audit-statement")

	// A tampered balance: the CLI's exit 1 is the page's MISMATCH.
	if _, err := f.g.DB().DB.Exec(`update balances set balance = balance + 1 where account_id = (
		select id from accounts where merchant_id = $1 and type = 'funding' and currency = 'EUR')`, f.a.ID); err != nil {
		t.Fatal(err)
	}
	rep = f.cliStatement(t, f.a.ID, today)
	if rep.OK() {
		t.Fatal("the CLI's statement reconciles after tampering")
	}
	b.open(t, f.url(q(f.a.ShopNo, day, day)))
	want := "MISMATCH: " + strconv.Itoa(rep.Mismatches) + " accounts do not reconcile."
	if s := b.text(t, "#statement-result"); s != want {
		t.Errorf("after tampering: %q, want %q", s, want)
	}
	if c := eval[string](t, b, `document.querySelector('#statement-result').className`); c != "error" {
		t.Errorf("verdict's class %q, want error", c)
	}
	if s := b.text(t, "#statement-accounts tr.mismatch"); !strings.Contains(s, "MISMATCH") || !strings.Contains(s, "but the balance is") {
		t.Errorf("mismatched row: %q", s)
	}
	b.shot(t, "audit-statement-mismatch")
	// Merchant B is untouched and reconciles.
	b.open(t, f.url(q(f.b.ShopNo, day, day)))
	if s := b.text(t, "#statement-result"); !strings.HasPrefix(s, "Every account reconciles") {
		t.Errorf("merchant B: %q", s)
	}

	// Refusals name the field and keep the form.
	for _, tt := range []struct{ path, want string }{
		{q("SHOP_UNKNOWN_1", day, day), `shopNo: no merchant has the shop number "SHOP_UNKNOWN_1"`},
		{q(strings.Repeat("S", 65), day, day), "shopNo: is not a shop number"},
		{q("SH\x01", day, day), "shopNo: must not contain control characters"}, // the door's (formtext.go)
		{q("", day, day), "shopNo: required"},
		{"/audit/statement?shopNo=" + f.a.ShopNo + "&shopNo=" + f.b.ShopNo, "shopNo: appears more than once"},
		{q(f.a.ShopNo, "2026-02-30", day), "startDate: "},
		{q(f.a.ShopNo, day, "tomorrow"), "endDate: "},
		{q(f.a.ShopNo, "0000-01-01", day), "startDate: "},
		{q(f.a.ShopNo, day, today.AddDate(0, 0, -1).Format("2006-01-02")), "endDate: must not be before startDate"},
		{q(f.a.ShopNo, today.AddDate(0, 0, -366).Format("2006-01-02"), day), "endDate: must be within 366 days"},
	} {
		code, body := b.getPage(t, tt.path)
		if code != 400 || !strings.HasPrefix(formError(body), tt.want) {
			t.Errorf("%s: %d %q, want 400 %q", tt.path, code, formError(body), tt.want)
		}
		if strings.Contains(body, `id="statement-result"`) {
			t.Errorf("%s: a report with a refusal", tt.path)
		}
	}
	code, body := b.getPage(t, q("SHOP_UNKNOWN_1", day, day))
	if code != 400 || !strings.Contains(body, `value="SHOP_UNKNOWN_1"`) {
		t.Errorf("the refused form does not keep the shop number: %d", code)
	}
	b.open(t, f.url(q("SHOP_UNKNOWN_1", day, day)))
	b.shot(t, "audit-statement-refused")
	// 366 days, both included, is the bound, as the merchant's page's.
	if code, body := b.getPage(t, q(f.b.ShopNo, today.AddDate(0, 0, -365).Format("2006-01-02"), day)); code != 200 || formError(body) != "" {
		t.Errorf("366 days: %d %q", code, formError(body))
	}

	// The operator may read it too (the auditor's pages are the operator's).
	op := f.operator(t)
	op.open(t, f.url(q(f.b.ShopNo, day, day)))
	if s := op.text(t, "#statement-result"); !strings.HasPrefix(s, "Every account reconciles") {
		t.Errorf("operator: %q", s)
	}
	acts := strings.Join(f.auditActions(t), " ")
	if strings.Count(acts, "audit.statement:ok") != 4 || strings.Count(acts, "audit.statement:failed") != 1 {
		t.Errorf("audit trail %s: want 4 audit.statement:ok and 1 failed", acts)
	}
}

// writeFile writes a test file and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sanctionsNow is the loaded list's version and size, from the database.
func (f *fixture) sanctionsNow(t *testing.T) (version, entries int64) {
	t.Helper()
	if err := f.g.DB().DB.QueryRow(`select coalesce(max(version), 0), count(*) from sanctions_entries`).Scan(&version, &entries); err != nil {
		t.Fatal(err)
	}
	return version, entries
}

// upload sends the file through the sanctions page's form and waits for
// the answer.
func (b *browser) uploadSanctions(t *testing.T, f *fixture, path, wait string) {
	t.Helper()
	b.open(t, f.url("/operator/sanctions"))
	b.do(t, chromedp.SetUploadFiles(chromedp.ID("file"), []string{path}), chromedp.Click(chromedp.ID("upload")))
	b.waitJS(t, `!!document.querySelector('`+wait+`')`)
}

func TestSanctionsLoadPage(t *testing.T) {
	f := newFixture(t)
	b := f.operator(t)
	b.open(t, f.url("/operator/sanctions"))
	if s := b.text(t, "#sanctions-none"); !strings.HasPrefix(s, "No sanctions list is loaded") {
		t.Errorf("before any load: %q", s)
	}

	// Upload: parsed and shown, nothing loaded yet.
	list := "name,country,list,id\n\"Acme, Evil Inc.\",ir,OFAC-SDN,1001\nIvan Petrov,RU,EU,2002\nNo Country Trading\n"
	b.uploadSanctions(t, f, writeFile(t, "list.csv", list), "#confirm")
	if s := b.text(t, "#confirm-count"); s != "3 entries" {
		t.Errorf("parsed: %q", s)
	}
	if s := b.text(t, "#confirm-sample tbody"); !strings.Contains(s, "Acme, Evil Inc.") || !strings.Contains(s, "IR") || !strings.Contains(s, "No Country Trading") {
		t.Errorf("sample: %q", s)
	}
	if v, n := f.sanctionsNow(t); v != 0 || n != 0 {
		t.Fatalf("the upload loaded: version %d, %d entries", v, n)
	}
	b.shot(t, "sanctions-confirm")
	key := eval[string](t, b, `document.querySelector('input[name=idempotencyKey]').value`)
	tok := b.csrf(t)
	b.do(t, chromedp.Click(chromedp.ID("confirm")))
	b.waitJS(t, `!!document.querySelector('#loaded')`)
	if v, n := f.sanctionsNow(t); v != 1 || n != 3 {
		t.Fatalf("after the confirmation: version %d, %d entries", v, n)
	}
	// As the CLI loads it: the remittance domain reads the same list.
	entries, version, err := f.g.Remit.Sanctions(context.Background())
	if err != nil || version != 1 || len(entries) != 3 || entries[0].Name != "Acme, Evil Inc." || entries[0].Country != "IR" ||
		entries[0].List != "OFAC-SDN" || entries[0].Ref != "1001" || entries[2].Country != "" {
		t.Errorf("loaded list: %+v, version %d, %v", entries, version, err)
	}
	if s := b.text(t, "#sanctions-count"); s != "3" {
		t.Errorf("count shown: %q", s)
	}
	if s := b.text(t, "#sanctions-loaded"); !strings.Contains(s, "by olga.operator, from the console") {
		t.Errorf("loaded by: %q", s)
	}
	b.shot(t, "sanctions")

	// The same confirmation again loads nothing and answers the first load.
	if code := b.post(t, "/operator/sanctions/confirm", map[string]string{"csrf": tok, "idempotencyKey": key}); code != 0 {
		t.Errorf("the confirmation again: %d, want a redirect", code)
	}
	if v, _ := f.sanctionsNow(t); v != 1 {
		t.Errorf("the confirmation sent twice loaded twice: version %d", v)
	}
	// Two at once (a double click): one load.
	b.uploadSanctions(t, f, writeFile(t, "list2.csv", "name,country\nSomeone Else,KP\n"), "#confirm")
	key = eval[string](t, b, `document.querySelector('input[name=idempotencyKey]').value`)
	both := eval[string](t, b, `(() => { const send = () => fetch('/operator/sanctions/confirm', {method: 'POST', redirect: 'follow',
		body: new URLSearchParams({csrf: `+jsString(tok)+`, idempotencyKey: `+jsString(key)+`})}).then(r => r.status + ' ' + r.url);
		return Promise.all([send(), send()]).then(a => a.join(','))})()`)
	if want := "200 " + f.url("/operator/sanctions?loaded=2"); both != want+","+want {
		t.Errorf("two confirmations at once: %s", both)
	}
	if v, n := f.sanctionsNow(t); v != 2 || n != 1 {
		t.Errorf("after a double confirmation: version %d, %d entries; want 2, 1", v, n)
	}

	// A file of the header alone is a list of none, as the CLI loads it:
	// the confirmation says what that means.
	b.uploadSanctions(t, f, writeFile(t, "empty.csv", "name,country\n"), "#confirm")
	if s := b.text(t, "#confirm-empty"); !strings.Contains(s, "screening matches nothing") {
		t.Errorf("an empty list: %q", s)
	}

	// Parser refusals name the line, load nothing and keep the list.
	for _, tt := range []struct{ file, want string }{
		{"name,country\nGood Name,US\nBad Country,XX1\n", `file: line 3: "XX1" is not an ISO 3166-1 alpha-2 country code`},
		{"name,country\na,US,b,c,d\n", "file: line 2 has 5 fields"},
		{"name,country\n!!!,US\n", "file: line 2: the name has no letters or digits"},
		{"name,country\nIvan\u3164Petrov,RU\n", "file: line 2: the name must not contain invisible characters (found U+3164"}, // issue 27.1
		{"name,country\n\"open quote,US\n", "file: line 2"},
		{"name,country\n" + strings.Repeat("A", 5000) + ",US\n", "file: line 2 is longer than"},
	} {
		b.uploadSanctions(t, f, writeFile(t, "bad.csv", tt.file), "#form-error")
		if s := b.text(t, "#form-error"); !strings.HasPrefix(s, tt.want) {
			t.Errorf("%q: %q, want %q", tt.file[:min(len(tt.file), 40)], s, tt.want)
		}
	}
	b.shot(t, "sanctions-refused")
	if v, n := f.sanctionsNow(t); v != 2 || n != 1 {
		t.Errorf("a refused file changed the list: version %d, %d entries", v, n)
	}
	b.open(t, f.url("/operator/sanctions"))
	tok = b.csrf(t)
	// Past 8 MiB: 413, said as such.
	got := eval[int](t, b, `(() => { const fd = new FormData(); fd.append('csrf', document.querySelector('input[name=csrf]').value);
		fd.append('file', new Blob([new Uint8Array(9 << 20)]), 'big.csv');
		return fetch('/operator/sanctions', {method: 'POST', body: fd}).then(r => r.status); })()`)
	if got != 413 {
		t.Errorf("a 9 MiB file: %d, want 413", got)
	}
	// No file: 400 naming it.
	if code, body := b.postPage(t, "/operator/sanctions", map[string]string{"csrf": tok}); code != 400 || !strings.HasPrefix(formError(body), "file: choose") {
		t.Errorf("no file: %d %q", code, formError(body))
	}
	// Keys: malformed, unknown, expired; without the CSRF token.
	b.uploadSanctions(t, f, writeFile(t, "list3.csv", "name,country\nLate Entry,CU\n"), "#confirm")
	late := eval[string](t, b, `document.querySelector('input[name=idempotencyKey]').value`)
	for _, tt := range []struct{ key, want string }{
		{"", "idempotencyKey: missing or malformed"},
		{"console-deposit-" + strings.Repeat("ab", 16), "idempotencyKey: missing or malformed"},
		{late + "0", "idempotencyKey: missing or malformed"},
		{"console-sanctions-" + strings.Repeat("ab", 16), "idempotencyKey: this upload is unknown"},
	} {
		code, body := b.postPage(t, "/operator/sanctions/confirm", map[string]string{"csrf": tok, "idempotencyKey": tt.key})
		if code != 400 || !strings.HasPrefix(formError(body), tt.want) {
			t.Errorf("key %q: %d %q, want 400 %q", tt.key, code, formError(body), tt.want)
		}
	}
	// Another operator's confirmation of this upload: the key is the
	// uploader's only.
	f.addUser(t, console.NewUser{Login: "oscar.operator", Role: console.RoleOperator})
	other := newBrowser(t)
	other.login(t, f, "oscar.operator", f.code(t, "oscar.operator"))
	other.open(t, f.url("/operator/sanctions"))
	if code, body := other.postPage(t, "/operator/sanctions/confirm", map[string]string{"csrf": other.csrf(t), "idempotencyKey": late}); code != 400 ||
		!strings.HasPrefix(formError(body), "idempotencyKey: this upload is unknown") {
		t.Errorf("another operator's confirmation: %d %q", code, formError(body))
	}
	if code := b.post(t, "/operator/sanctions/confirm", map[string]string{"idempotencyKey": late}); code != 403 {
		t.Errorf("no CSRF token: %d, want 403", code)
	}
	f.clock.Add(16 * time.Minute)
	b.open(t, f.url("/operator/sanctions"))
	code, body := b.postPage(t, "/operator/sanctions/confirm", map[string]string{"csrf": b.csrf(t), "idempotencyKey": late})
	if code != 400 || !strings.HasPrefix(formError(body), "idempotencyKey: this upload is unknown or older than 15 minutes") {
		t.Errorf("an expired upload: %d %q", code, html.UnescapeString(formError(body)))
	}
	if v, n := f.sanctionsNow(t); v != 2 || n != 1 {
		t.Errorf("a refused confirmation changed the list: version %d, %d entries", v, n)
	}
	// Opened with GET, the confirmation's URL is the page.
	b.open(t, f.url("/operator/sanctions/confirm"))
	if loc := b.location(t); loc != f.url("/operator/sanctions") {
		t.Errorf("GET the confirmation: at %s", loc)
	}
	acts := strings.Join(f.auditActions(t), " ")
	if strings.Count(acts, "sanctions.load:ok") != 4 || strings.Count(acts, "sanctions.load:failed") != 6 ||
		strings.Count(acts, "sanctions.load:refused") != 3 {
		t.Errorf("audit trail %s: want 4 sanctions.load:ok (2 loads, 2 replays), 6 failed, 3 refused", acts)
	}
}

// A merchant's users get 403 on every house page of this file, the auditor
// on the operator's sanctions page; nothing is loaded.
func TestHousePagesForStatementAndSanctionsRefuseOtherRoles(t *testing.T) {
	f := newFixture(t)
	day := f.g.Now().UTC().Format("2006-01-02")
	statement := "/audit/statement?shopNo=" + f.a.ShopNo + "&startDate=" + day + "&endDate=" + day
	list := writeFile(t, "list.csv", "name,country\nSomeone,IR\n")
	for _, u := range []string{"ann.admin", "fred.finance", "rita.readonly", "aldo.auditor"} {
		b := newBrowser(t)
		code := ""
		if u == "aldo.auditor" {
			code = f.code(t, u)
		}
		b.login(t, f, u, code)
		gets := []string{"/operator/sanctions", "/operator/sanctions/confirm"}
		if u != "aldo.auditor" {
			gets = append(gets, statement, "/audit/statement")
		}
		for _, p := range gets {
			if st, _ := b.getPage(t, p); st != 403 {
				t.Errorf("%s opens %s: %d, want 403", u, p, st)
			}
		}
		tok := b.csrf(t)
		if st := b.post(t, "/operator/sanctions/confirm", map[string]string{"csrf": tok,
			"idempotencyKey": "console-sanctions-" + strings.Repeat("ab", 16)}); st != 403 {
			t.Errorf("%s confirms: %d, want 403", u, st)
		}
		// The upload form, sent as a browser would from a crafted page.
		body, err := os.ReadFile(list)
		if err != nil {
			t.Fatal(err)
		}
		st := eval[int](t, b, `(() => { const fd = new FormData(); fd.append('csrf', `+jsString(tok)+`);
			fd.append('file', new Blob([`+jsString(string(body))+`]), 'list.csv');
			return fetch('/operator/sanctions', {method: 'POST', body: fd}).then(r => r.status); })()`)
		if st != 403 {
			t.Errorf("%s uploads: %d, want 403", u, st)
		}
	}
	if v, n := f.sanctionsNow(t); v != 0 || n != 0 {
		t.Errorf("a refused role loaded: version %d, %d entries", v, n)
	}
	acts := strings.Join(f.auditActions(t), " ")
	if strings.Count(acts, "request.refused:refused") != 8 || strings.Contains(acts, "sanctions.load") || strings.Contains(acts, "audit.statement") {
		t.Errorf("audit trail %s: want 8 refusals and no load or statement", acts)
	}
}
