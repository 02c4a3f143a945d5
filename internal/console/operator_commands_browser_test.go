package console_test

import (
	"context"
	"database/sql"
	"html"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/postings"
)

// The operator CLI's commands that the console runs too, each through the
// CLI's domain function: a merchant's callback URL (merchant callback-url),
// a deposit with its confirmation (merchant deposit), an FX rate (fx set)
// and a key roll (merchant roll-key). Each is checked in the database, in
// the audit trail, and refused (400 naming the field, 403 without the token
// or for another role) without a trace.

// postPage sends a form as post does and returns the status and the body
// (a redirect, not followed, has status 0: fetch's opaque redirect).
func (b *browser) postPage(t *testing.T, path string, form map[string]string) (int, string) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("fetch(" + jsString(path) + ", {method: 'POST', redirect: 'manual', body: new URLSearchParams({")
	for k, v := range form {
		sb.WriteString(jsString(k) + ": " + jsString(v) + ",")
	}
	sb.WriteString("})}).then(async r => r.status + '\\n' + await r.text())")
	s := eval[string](t, b, sb.String())
	code, body, _ := strings.Cut(s, "\n")
	n, err := strconv.Atoi(code)
	if err != nil {
		t.Fatalf("post %s: status %q", path, code)
	}
	return n, body
}

// formError is the refusal a page shows above its form, or the refusal of
// a field at the door (formtext.go), which is the error page ("" for none).
func formError(body string) string {
	_, after, ok := strings.Cut(body, `id="form-error">`)
	if !ok {
		if _, after, ok = strings.Cut(body, `id="error">`); !ok {
			return ""
		}
	}
	msg, _, _ := strings.Cut(after, "</p>")
	return html.UnescapeString(msg)
}

// depositEntries counts merchant m's DEPOSIT entries.
func (f *fixture) depositEntries(t *testing.T, m int64) int {
	t.Helper()
	var n int
	if err := f.g.DB().DB.QueryRow(`select count(*) from entries where merchant_id = $1 and kind = 'DEPOSIT'`, m).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) funding(t *testing.T, m int64, cur string) int64 {
	t.Helper()
	bal, err := f.g.Balance(context.Background(), postings.MerchantAccount(m, postings.AccountFunding, cur))
	if err != nil {
		t.Fatal(err)
	}
	return bal
}

func (f *fixture) callbackURL(t *testing.T, m int64) sql.NullString {
	t.Helper()
	var u sql.NullString
	if err := f.g.DB().DB.QueryRow(`select callback_url from merchants where id = $1`, m).Scan(&u); err != nil {
		t.Fatal(err)
	}
	return u
}

func (f *fixture) verifyJournal(t *testing.T, m int64) {
	t.Helper()
	rep, err := audit.New(f.g.Ledger).Verify(context.Background(), audit.VerifyOptions{Merchant: m})
	if err != nil || !rep.OK() {
		t.Fatalf("journal of %d: %+v, %v", m, rep, err)
	}
}

func (f *fixture) operator(t *testing.T) *browser {
	t.Helper()
	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.open(t, f.url("/operator/merchants/"+f.a.ShopNo))
	return b
}

func TestOperatorSetsCallbackURL(t *testing.T) {
	f := newFixture(t)
	b := f.operator(t)
	page := "/operator/merchants/" + f.a.ShopNo
	if s := b.text(t, "#callback-now"); s != "https://127.0.0.1:9/callbacks" {
		t.Errorf("callback URL shown %q", s)
	}
	b.do(t, chromedp.SetValue(chromedp.ID("callbackUrl"), " https://shop.example.com/hooks?tag=a "), chromedp.Click(chromedp.ID("save-callback-url")))
	b.waitSaved(t, "Callback URL saved.")
	if u := f.callbackURL(t, f.a.ID); u.String != "https://shop.example.com/hooks?tag=a" {
		t.Errorf("callback URL stored %+v", u)
	}
	if s := b.text(t, "#callback-now"); s != "https://shop.example.com/hooks?tag=a" {
		t.Errorf("callback URL shown %q", s)
	}

	// A loopback address is what the sender refuses without
	// GATEWAY_CALLBACK_ALLOW_PRIVATE: refused when typed, the text kept.
	b.do(t, chromedp.SetValue(chromedp.ID("callbackUrl"), "http://127.0.0.1:8080/hooks"), chromedp.Click(chromedp.ID("save-callback-url")))
	b.waitJS(t, `!!document.querySelector('#form-error')`)
	if s := b.text(t, "#form-error"); !strings.HasPrefix(s, "callbackUrl:") {
		t.Errorf("callback URL refusal: %q", s)
	}
	if v := eval[string](t, b, `document.querySelector('#callbackUrl').value`); v != "http://127.0.0.1:8080/hooks" {
		t.Errorf("the form lost what was typed: %q", v)
	}
	b.shot(t, "merchant-callback-refused")
	for _, bad := range []string{"ftp://shop.example/hooks", "https://user:pw@shop.example/", "https://shop.example.com/a b",
		"http://169.254.169.254/latest/meta-data", "http://localhost/hooks", "https://shop.example.com/\x01", "shop.example/hooks",
		"https://shop.example.com/" + strings.Repeat("a", 2100)} {
		code, body := b.postPage(t, page+"/callback-url", map[string]string{"csrf": b.csrf(t), "callbackUrl": bad})
		if code != 400 || !strings.HasPrefix(formError(body), "callbackUrl:") {
			t.Errorf("callback URL %.40q: %d %q, want 400 naming callbackUrl", bad, code, formError(body))
		}
	}
	if u := f.callbackURL(t, f.a.ID); u.String != "https://shop.example.com/hooks?tag=a" {
		t.Errorf("a refused URL changed it: %+v", u)
	}
	// Without the token nothing happens.
	if got := b.post(t, page+"/callback-url", map[string]string{"callbackUrl": "https://evil.example/"}); got != 403 {
		t.Errorf("callback URL without token: %d, want 403", got)
	}
	// Empty removes it, as the CLI's --url "".
	b.open(t, f.url(page))
	// (chromedp's SetValue refuses an empty value: the page's own script.)
	eval[bool](t, b, `(document.querySelector('#callbackUrl').value = '', true)`)
	b.do(t, chromedp.Click(chromedp.ID("save-callback-url")))
	b.waitSaved(t, "Callback URL saved.")
	if u := f.callbackURL(t, f.a.ID); u.Valid {
		t.Errorf("an empty URL left %+v", u)
	}
	if s := b.text(t, "#callback-now"); s != "none" {
		t.Errorf("callback URL shown %q after removing it", s)
	}
	if u := f.callbackURL(t, f.b.ID); u.String != "https://127.0.0.1:9/callbacks" {
		t.Errorf("merchant B's callback URL changed: %+v", u)
	}
	acts := strings.Join(f.auditActions(t), " ")
	if strings.Count(acts, "merchant.callback_url:ok") != 2 {
		t.Errorf("audit trail %s: want two merchant.callback_url:ok", acts)
	}
}

func TestOperatorDeposits(t *testing.T) {
	f := newFixture(t)
	b := f.operator(t)
	page := "/operator/merchants/" + f.a.ShopNo
	before, count := f.funding(t, f.a.ID, "USD"), f.depositEntries(t, f.a.ID)

	// The form leads to a confirmation; nothing is booked yet.
	b.do(t, chromedp.SetValue(chromedp.ID("deposit-currency"), "USD"), chromedp.SendKeys(chromedp.ID("deposit-amount"), "250.75"),
		chromedp.SendKeys(chromedp.ID("deposit-reference"), "BANK-CONSOLE-1"),
		chromedp.Click(chromedp.ID("deposit")), chromedp.WaitVisible(chromedp.ID("confirm-text")))
	if s := b.text(t, "#confirm-reference"); s != "BANK-CONSOLE-1" {
		t.Errorf("confirmation shows the reference %q", s)
	}
	if s := b.text(t, "#confirm-amount"); s != "250.75 USD" {
		t.Errorf("confirmation shows %q", s)
	}
	if f.depositEntries(t, f.a.ID) != count {
		t.Fatal("the first step deposited")
	}
	b.shot(t, "deposit-confirm")
	confirmed := map[string]string{}
	for _, k := range []string{"csrf", "currency", "amount", "bankReference", "idempotencyKey"} {
		confirmed[k] = eval[string](t, b, `document.querySelector('form[action$="/deposit/confirm"] input[name=`+k+`]').value`)
	}
	if !strings.HasPrefix(confirmed["idempotencyKey"], "console-deposit-") {
		t.Fatalf("confirmation's key %q", confirmed["idempotencyKey"])
	}
	b.do(t, chromedp.Click(chromedp.ID("confirm")))
	b.waitSaved(t, "Deposit booked: a DEPOSIT entry in the journal, counted in the funding balance below.")
	after := f.funding(t, f.a.ID, "USD")
	if after != before+25_075 || f.depositEntries(t, f.a.ID) != count+1 {
		t.Fatalf("funding %d -> %d, deposits %d -> %d", before, after, count, f.depositEntries(t, f.a.ID))
	}
	cur, _ := postings.LookupCurrency("USD")
	if s := b.text(t, `#funding-table tr[data-currency="USD"] td.num`); strings.ReplaceAll(s, ",", "") != postings.FormatMinor(after, cur) {
		t.Errorf("funding shown %q, want %s", s, postings.FormatMinor(after, cur))
	}
	b.shot(t, "merchant-deposited")
	var amount int64
	var kind string
	if err := f.g.DB().DB.QueryRow(`select e.kind, p.amount from entries e join postings p using (merchant_id, merchant_seq)
		where e.merchant_id = $1 order by e.merchant_seq desc limit 1`, f.a.ID).Scan(&kind, &amount); err != nil || kind != "DEPOSIT" || amount != 25_075 {
		t.Errorf("last entry %s %d, %v", kind, amount, err)
	}

	// The same confirmed form again (a double click, a re-post): the
	// ledger replays the first deposit; one entry, the same balance.
	if got := b.post(t, page+"/deposit/confirm", confirmed); got != 0 && got != 303 {
		t.Errorf("the same form again: %d, want the redirect", got)
	}
	if f.depositEntries(t, f.a.ID) != count+1 || f.funding(t, f.a.ID, "USD") != after {
		t.Errorf("a double submit deposited twice: %d entries, funding %d", f.depositEntries(t, f.a.ID)-count, f.funding(t, f.a.ID, "USD"))
	}
	// The same key with another amount is the ledger's conflict.
	other := map[string]string{}
	for k, v := range confirmed {
		other[k] = v
	}
	other["amount"] = "300"
	if got := b.post(t, page+"/deposit/confirm", other); got != 409 {
		t.Errorf("the key with another amount: %d, want 409", got)
	}

	// Refusals, at either step: 400 naming the field, nothing booked.
	b.open(t, f.url(page))
	b.do(t, chromedp.SetValue(chromedp.ID("deposit-currency"), "USD"), chromedp.SendKeys(chromedp.ID("deposit-amount"), "1.001"),
		chromedp.SendKeys(chromedp.ID("deposit-reference"), "BANK-CONSOLE-3"), chromedp.Click(chromedp.ID("deposit")))
	b.waitJS(t, `!!document.querySelector('#form-error')`)
	if s := b.text(t, "#form-error"); !strings.HasPrefix(s, "amount:") || !strings.Contains(s, "2 decimals") {
		t.Errorf("1.001 USD refused with %q", s)
	}
	if v := eval[string](t, b, `document.querySelector('#deposit-amount').value`); v != "1.001" {
		t.Errorf("the deposit form lost what was typed: %q", v)
	}
	b.shot(t, "deposit-refused")
	key := "console-deposit-" + strings.Repeat("0", 32) // a fresh key: never sent before
	for _, tc := range []struct{ currency, amount, field string }{
		{"USD", "1.001", "amount"},
		{"USD", "0", "amount"},
		{"USD", "0.00", "amount"},
		{"USD", "-5", "amount"},
		{"USD", "", "amount"},
		{"USD", "12,50", "amount"},
		{"USD", "1e300", "amount"},
		{"USD", "10000000000001", "amount"}, // 10^15 + 100 minor units: past the journal's bound
		{"USD", "NaN", "amount"},
		{"USD", "１０", "amount"}, // full-width digits
		{"USD", strings.Repeat("9", 40), "amount"},
		{"XYZ", "10", "currency"},
		{"GBP", "10", "currency"}, // a currency the gateway holds, not the merchant's
		{"", "10", "currency"},
		{"US", "10", "currency"},
	} {
		for _, step := range []string{"/deposit", "/deposit/confirm"} {
			code, body := b.postPage(t, page+step, map[string]string{"csrf": b.csrf(t), "currency": tc.currency, "amount": tc.amount, "idempotencyKey": key})
			if code != 400 || !strings.HasPrefix(formError(body), tc.field+":") {
				t.Errorf("%s %q %q: %d %q, want 400 naming %s", step, tc.currency, tc.amount, code, formError(body), tc.field)
			}
		}
	}
	for _, k := range []string{"", "wire-42", "console-deposit-xyz", "console-deposit-" + strings.Repeat("A", 32)} {
		code, body := b.postPage(t, page+"/deposit/confirm", map[string]string{"csrf": b.csrf(t), "currency": "USD", "amount": "10",
			"bankReference": "BANK-CONSOLE-2", "idempotencyKey": k})
		if code != 400 || !strings.HasPrefix(formError(body), "idempotencyKey:") {
			t.Errorf("key %q: %d %q, want 400 naming idempotencyKey", k, code, formError(body))
		}
	}
	// The bank reference: required and checked at either step, and a
	// second deposit naming one already booked is the ledger's conflict.
	for _, ref := range []string{"", "two words", "a/b", "<b>x</b>", strings.Repeat("R", 36)} {
		for _, step := range []string{"/deposit", "/deposit/confirm"} {
			code, body := b.postPage(t, page+step, map[string]string{"csrf": b.csrf(t), "currency": "USD", "amount": "10",
				"bankReference": ref, "idempotencyKey": key})
			if code != 400 || !strings.HasPrefix(formError(body), "bankReference:") {
				t.Errorf("%s reference %q: %d %q, want 400 naming bankReference", step, ref, code, formError(body))
			}
		}
	}
	code, body := b.postPage(t, page+"/deposit/confirm", map[string]string{"csrf": b.csrf(t), "currency": "USD", "amount": "10",
		"bankReference": "BANK-CONSOLE-1", "idempotencyKey": key})
	if code != 409 || !strings.Contains(formError(body), "BANK-CONSOLE-1") {
		t.Errorf("a second deposit of one bank reference: %d %q, want 409 naming it", code, formError(body))
	}
	// Without the token nothing happens, with a fresh key.
	if got := b.post(t, page+"/deposit/confirm", map[string]string{"currency": "USD", "amount": "10", "idempotencyKey": key}); got != 403 {
		t.Errorf("deposit without token: %d, want 403", got)
	}
	if got := b.post(t, "/operator/merchants/SH0000000000/deposit/confirm", map[string]string{"csrf": b.csrf(t), "currency": "USD", "amount": "10", "idempotencyKey": key}); got != 404 {
		t.Errorf("deposit to an unknown merchant: %d, want 404", got)
	}
	if f.depositEntries(t, f.a.ID) != count+1 || f.funding(t, f.a.ID, "USD") != after {
		t.Errorf("a refusal deposited: %d entries, funding %d", f.depositEntries(t, f.a.ID)-count, f.funding(t, f.a.ID, "USD"))
	}
	f.verifyJournal(t, f.a.ID)

	// The trail: two ok rows (the double submit) naming the same entry,
	// and the conflict as failed.
	rows, err := f.g.DB().DB.Query(`select outcome, detail from console_audit where action = 'merchant.deposit' order by id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var o, d string
		if err := rows.Scan(&o, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, o+" "+d)
	}
	// The pending row named the amount, the bank reference and the key
	// before the deposit; its outcome appended the entry's sequence
	// (audit_intent.go). Two failures: the key with another amount, the
	// bank reference again.
	if len(got) != 4 || got[0] != got[1] || !strings.HasPrefix(got[0], "ok 250.75 USD, bank reference BANK-CONSOLE-1, key console-deposit-") ||
		!strings.Contains(got[0], ", seq ") || !strings.HasPrefix(got[2], "failed ") || !strings.HasPrefix(got[3], "failed ") {
		t.Errorf("deposit audit rows: %q", got)
	}
}

func TestOperatorSetsRate(t *testing.T) {
	f := newFixture(t)
	b := f.operator(t)
	b.open(t, f.url("/operator/rates"))
	b.do(t, chromedp.SendKeys(chromedp.ID("pair"), "usd/jpy"), chromedp.SendKeys(chromedp.ID("rate"), "151.2345"),
		chromedp.SetValue(chromedp.ID("spreadBps"), "25"), chromedp.Click(chromedp.ID("save-rate")))
	b.waitJS(t, `(document.querySelector('#saved') || {}).textContent === 'Rate saved.'`)
	var mid, source string
	var spread int64
	if err := f.g.DB().DB.QueryRow(`select mid_rate::text, spread_bps, source from fx_rates where base = 'USD' and quote = 'JPY'`).
		Scan(&mid, &spread, &source); err != nil || mid != "151.2345" || spread != 25 || source != "operator" {
		t.Fatalf("USD/JPY stored %s %d %s, %v", mid, spread, source, err)
	}
	row := `#rates tr[data-pair="USD/JPY"]`
	if s := b.text(t, row+" td.mid"); s != "151.2345" {
		t.Errorf("mid shown %q", s)
	}
	// Its age starts again (the page's clock is the fixture's, a few
	// seconds behind the ledger's: only that it is shown and fresh).
	if s := b.text(t, row+" td.age"); s == "" || strings.Contains(s, "stale") {
		t.Errorf("age shown %q", s)
	}
	b.shot(t, "rates-set")

	// Refusals: the field named, what was typed kept, nothing stored.
	b.do(t, chromedp.SetValue(chromedp.ID("pair"), "USD/JPY"), chromedp.SetValue(chromedp.ID("rate"), "-1"), chromedp.Click(chromedp.ID("save-rate")))
	b.waitJS(t, `!!document.querySelector('#form-error')`)
	if s := b.text(t, "#form-error"); !strings.HasPrefix(s, "rate:") {
		t.Errorf("rate -1 refused with %q", s)
	}
	if v := eval[string](t, b, `document.querySelector('#rate').value`); v != "-1" {
		t.Errorf("the rate form lost what was typed: %q", v)
	}
	b.shot(t, "rates-refused")
	for _, tc := range []struct{ pair, rate, spread, field string }{
		{"USD/JPY", "0", "25", "rate"},
		{"USD/JPY", "abc", "25", "rate"},
		{"USD/JPY", "", "25", "rate"},
		{"USD/JPY", "1e10", "25", "rate"},
		{"USD/JPY", "0.0000000001", "25", "rate"},
		{"USD/JPY", "1.23456789012345678901234567890", "25", "rate"},
		{"USD/JPY", "NaN", "25", "rate"},
		{"USD/JPY", "1,5", "25", "rate"},
		{"USD-JPY", "1.5", "25", "pair"},
		{"USD/USD", "1", "25", "pair"},
		{"USD/XYZ", "1", "25", "pair"},
		{"", "1", "25", "pair"},
		{"USD/JPYX", "1", "25", "pair"},
		{"USD/JPY", "1.5", "10000", "spreadBps"},
		{"USD/JPY", "1.5", "-1", "spreadBps"},
		{"USD/JPY", "1.5", "2.5", "spreadBps"},
		{"USD/JPY", "1.5", "", "spreadBps"},
	} {
		code, body := b.postPage(t, "/operator/rates", map[string]string{"csrf": b.csrf(t), "pair": tc.pair, "rate": tc.rate, "spreadBps": tc.spread})
		if code != 400 || !strings.HasPrefix(formError(body), tc.field+":") {
			t.Errorf("%q %q %q: %d %q, want 400 naming %s", tc.pair, tc.rate, tc.spread, code, formError(body), tc.field)
		}
	}
	if got := b.post(t, "/operator/rates", map[string]string{"pair": "USD/JPY", "rate": "1", "spreadBps": "0"}); got != 403 {
		t.Errorf("rate without token: %d, want 403", got)
	}
	if err := f.g.DB().DB.QueryRow(`select mid_rate::text, spread_bps from fx_rates where base = 'USD' and quote = 'JPY'`).
		Scan(&mid, &spread); err != nil || mid != "151.2345" || spread != 25 {
		t.Errorf("after refusals USD/JPY is %s %d, %v", mid, spread, err)
	}
	if acts := strings.Join(f.auditActions(t), " "); strings.Count(acts, "fx.set:ok") != 1 {
		t.Errorf("audit trail %s: want one fx.set:ok", acts)
	}
}

func TestOperatorRollsKey(t *testing.T) {
	f := newFixture(t)
	b := f.operator(t)
	page := "/operator/merchants/" + f.a.ShopNo
	db := f.g.DB().DB
	var oldHash []byte
	if err := db.QueryRow(`select public_key_sha256 from merchants where id = $1`, f.a.ID).Scan(&oldHash); err != nil {
		t.Fatal(err)
	}
	form := map[string]string{"csrf": b.csrf(t), "key": "public", "overlapHours": "0",
		"idempotencyKey": eval[string](t, b, `document.querySelector('form[action$="/roll-key"] input[name=idempotencyKey]').value`)}
	b.do(t, chromedp.SetValue(chromedp.ID("roll-kind"), "public"), chromedp.SetValue(chromedp.ID("overlapHours"), "0"),
		chromedp.Click(chromedp.ID("roll")), chromedp.WaitVisible(chromedp.ID("new-key")))
	key := b.text(t, "#new-key")
	if _, err := f.g.Authenticate(context.Background(), f.a.ShopNo, key); err != nil {
		t.Fatalf("the new key does not authenticate: %v", err)
	}
	if s := b.text(t, "#previous-until"); s != "ended at once" {
		t.Errorf("overlap 0 shown as %q", s)
	}
	b.shot(t, "key-rolled")
	// The same form again: the ledger's replay, no second roll (which
	// would have made the shown key the previous one), no key shown.
	code, body := b.postPage(t, page+"/roll-key", form)
	if code != 200 || !strings.Contains(body, `id="replayed"`) || strings.Contains(body, key) {
		t.Errorf("the same roll again: %d, replayed %v", code, strings.Contains(body, `id="replayed"`))
	}
	if _, err := f.g.Authenticate(context.Background(), f.a.ShopNo, key); err != nil {
		t.Errorf("after the replay the shown key fails: %v", err)
	}
	var hash []byte
	if err := db.QueryRow(`select public_key_sha256 from merchants where id = $1`, f.a.ID).Scan(&hash); err != nil || string(hash) == string(oldHash) {
		t.Errorf("public key hash unchanged, %v", err)
	}

	// The signing key with the default overlap: the replaced one stays.
	b.open(t, f.url(page))
	b.do(t, chromedp.SetValue(chromedp.ID("roll-kind"), "signing"), chromedp.Click(chromedp.ID("roll")), chromedp.WaitVisible(chromedp.ID("new-key")))
	if s := b.text(t, "#previous-until"); !strings.HasSuffix(s, "(24 h)") {
		t.Errorf("overlap shown as %q", s)
	}
	var until sql.NullTime
	if err := db.QueryRow(`select private_key_prev_until from merchants where id = $1`, f.a.ID).Scan(&until); err != nil || !until.Valid {
		t.Errorf("signing key overlap %+v, %v", until, err)
	}

	b.open(t, f.url(page))
	fresh := eval[string](t, b, `document.querySelector('form[action$="/roll-key"] input[name=idempotencyKey]').value`)
	for _, tc := range []struct{ key, hours, idem, field string }{
		{"private", "24", fresh, "key"},
		{"", "24", fresh, "key"},
		{"public", "169", fresh, "overlapHours"},
		{"public", "-1", fresh, "overlapHours"},
		{"public", "", fresh, "overlapHours"},
		{"public", "1.5", fresh, "overlapHours"},
		{"public", "24", "", "idempotencyKey"},
		{"public", "24", "console-roll-zz", "idempotencyKey"},
	} {
		code, body := b.postPage(t, page+"/roll-key", map[string]string{"csrf": b.csrf(t), "key": tc.key, "overlapHours": tc.hours, "idempotencyKey": tc.idem})
		if code != 400 || !strings.HasPrefix(formError(body), tc.field+":") {
			t.Errorf("roll %q %q %q: %d %q, want 400 naming %s", tc.key, tc.hours, tc.idem, code, formError(body), tc.field)
		}
	}
	if got := b.post(t, page+"/roll-key", map[string]string{"key": "public", "overlapHours": "0", "idempotencyKey": fresh}); got != 403 {
		t.Errorf("roll without token: %d, want 403", got)
	}
	if _, err := f.g.Authenticate(context.Background(), f.a.ShopNo, key); err != nil {
		t.Errorf("a refused roll changed the key: %v", err)
	}
	if acts := strings.Join(f.auditActions(t), " "); strings.Count(acts, "merchant.roll_key:ok") != 3 {
		t.Errorf("audit trail %s: want three merchant.roll_key:ok (the replay included)", acts)
	}
}

// The new commands refuse a merchant's users and the auditor (403), and
// change nothing.
func TestOperatorCommandsRefuseOtherRoles(t *testing.T) {
	f := newFixture(t)
	count, fund := f.depositEntries(t, f.a.ID), f.funding(t, f.a.ID, "USD")
	var rates int
	db := f.g.DB().DB
	if err := db.QueryRow(`select count(*) from fx_rates where source = 'operator'`).Scan(&rates); err != nil {
		t.Fatal(err)
	}
	page := "/operator/merchants/" + f.a.ShopNo
	for _, u := range []string{"ann.admin", "fred.finance", "aldo.auditor"} {
		b := newBrowser(t)
		code := ""
		if u == "aldo.auditor" {
			code = f.code(t, u)
		}
		b.login(t, f, u, code)
		tok := b.csrf(t)
		for path, form := range map[string]map[string]string{
			page + "/callback-url":    {"callbackUrl": "https://evil.example/"},
			page + "/deposit":         {"currency": "USD", "amount": "10"},
			page + "/deposit/confirm": {"currency": "USD", "amount": "10", "idempotencyKey": "console-deposit-" + strings.Repeat("ab", 16)},
			page + "/roll-key":        {"key": "public", "overlapHours": "0", "idempotencyKey": "console-roll-" + strings.Repeat("ab", 16)},
			"/operator/rates":         {"pair": "USD/EUR", "rate": "5", "spreadBps": "0"},
		} {
			form["csrf"] = tok
			if got := b.post(t, path, form); got != 403 {
				t.Errorf("%s posts %s: %d, want 403", u, path, got)
			}
		}
	}
	var n int
	if err := db.QueryRow(`select count(*) from fx_rates where source = 'operator'`).Scan(&n); err != nil || n != rates {
		t.Errorf("operator rates %d -> %d, %v", rates, n, err)
	}
	if f.depositEntries(t, f.a.ID) != count || f.funding(t, f.a.ID, "USD") != fund {
		t.Error("a refused role deposited")
	}
	if u := f.callbackURL(t, f.a.ID); u.String != "https://127.0.0.1:9/callbacks" {
		t.Errorf("a refused role changed the callback URL: %+v", u)
	}
	if acts := strings.Join(f.auditActions(t), " "); strings.Count(acts, "request.refused:refused") != 15 {
		t.Errorf("audit trail %s: want 15 refusals", acts)
	}
}
