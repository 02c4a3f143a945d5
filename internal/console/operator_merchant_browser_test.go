package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The operator's page of one merchant: whitelist, KYB tier, limits and BIN
// access, each through the domain command, in the audit trail, with the
// field named on a refusal (400, the form kept).

func TestOperatorMerchantPage(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.do(t, chromedp.Click(chromedp.CSS(`tr[data-shop="`+f.a.ShopNo+`"] a`)), chromedp.WaitVisible(chromedp.ID("merchant")))
	if loc := b.location(t); !strings.HasSuffix(loc, "/operator/merchants/"+f.a.ShopNo) {
		t.Fatalf("merchant page at %s", loc)
	}
	db := f.g.DB().DB

	// IP whitelist: lines and commas, normalised by the ledger's rule.
	b.do(t, chromedp.SendKeys(chromedp.ID("ipWhitelist"), "10.0.0.1, 192.168.1.77/24\n2001:db8::1"),
		chromedp.Click(chromedp.ID("save-whitelist")))
	b.waitSaved(t, "IP whitelist saved.")
	m, err := f.g.MerchantByShopNo(b.ctx, f.a.ShopNo)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.IPWhitelist, ","); got != "10.0.0.1/32,192.168.1.0/24,2001:db8::1/128" {
		t.Errorf("whitelist stored %q", got)
	}
	// A bad entry: 400, the field named, the text kept, nothing stored.
	b.do(t, chromedp.SetValue(chromedp.ID("ipWhitelist"), "10.0.0.2\n10.0.0.300"), chromedp.Click(chromedp.ID("save-whitelist")))
	b.waitJS(t, `!!document.querySelector('#form-error')`)
	if s := b.text(t, "#form-error"); !strings.Contains(s, "ip_whitelist") || !strings.Contains(s, "10.0.0.300") {
		t.Errorf("whitelist refusal: %q", s)
	}
	if v := eval[string](t, b, `document.querySelector('#ipWhitelist').value`); v != "10.0.0.2\n10.0.0.300" {
		t.Errorf("the form lost what was typed: %q", v)
	}
	// The refusal left the browser on the POST's URL; opened again (a GET)
	// it goes back to the merchant's page, doing nothing (backto.go).
	for _, action := range []string{"whitelist", "deposit", "deposit/confirm", "roll-key"} {
		if st := b.open(t, f.url("/operator/merchants/"+f.a.ShopNo+"/"+action)); st != 200 {
			t.Errorf("GET …/%s: %d", action, st)
		}
		if loc := b.location(t); !strings.HasSuffix(loc, "/operator/merchants/"+f.a.ShopNo) {
			t.Errorf("GET …/%s ended at %s, want the merchant's page", action, loc)
		}
	}
	if m, _ := f.g.MerchantByShopNo(b.ctx, f.a.ShopNo); len(m.IPWhitelist) != 3 {
		t.Errorf("a GET changed the whitelist: %v", m.IPWhitelist)
	}
	if m, _ := f.g.MerchantByShopNo(b.ctx, f.a.ShopNo); len(m.IPWhitelist) != 3 {
		t.Errorf("a refused whitelist changed it: %v", m.IPWhitelist)
	}
	if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/whitelist", map[string]string{"csrf": b.csrf(t), "ipWhitelist": "not-an-ip"}); got != 400 {
		t.Errorf("bad whitelist: %d, want 400", got)
	}

	// KYB tier.
	b.open(t, f.url("/operator/merchants/"+f.a.ShopNo))
	b.do(t, chromedp.SetValue(chromedp.ID("tier"), "TIER_2"), chromedp.Click(chromedp.ID("set-kyb")))
	b.waitSaved(t, "KYB tier set; the limits went back to the tier's defaults.")
	if s := b.text(t, "#kyb-tier"); s != "TIER_2" {
		t.Errorf("kyb tier shown %q", s)
	}
	var tier string
	if err := db.QueryRow(`select kyb_tier from merchants where id = $1`, f.a.ID).Scan(&tier); err != nil || tier != "TIER_2" {
		t.Errorf("kyb tier %q, %v", tier, err)
	}
	if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/kyb", map[string]string{"csrf": b.csrf(t), "tier": "TIER_9"}); got != 400 {
		t.Errorf("bad tier: %d, want 400", got)
	}

	// Limits in USD.
	b.do(t, chromedp.SetValue(chromedp.ID("limit-currency"), "USD"), chromedp.SendKeys(chromedp.ID("cardBalanceMax"), "1234.56"),
		chromedp.SendKeys(chromedp.ID("dailyCardIssueMax"), "7890"), chromedp.Click(chromedp.ID("set-limits")))
	b.waitSaved(t, "Limits saved.")
	var bal, iss int64
	if err := db.QueryRow(`select card_balance_max, daily_card_issue_max from merchant_limits where merchant_id = $1 and currency = 'USD'`,
		f.a.ID).Scan(&bal, &iss); err != nil || bal != 123456 || iss != 789000 {
		t.Errorf("USD limits %d, %d, %v", bal, iss, err)
	}
	if s := b.text(t, `#limits-table tr[data-currency="USD"]`); !strings.Contains(s, "1,234.56") && !strings.Contains(s, "1234.56") {
		t.Errorf("limits row: %q", s)
	}
	// Three decimals in USD: refused naming the field, the values kept.
	b.do(t, chromedp.SetValue(chromedp.ID("cardBalanceMax"), "12.345"), chromedp.SetValue(chromedp.ID("dailyCardIssueMax"), "10"),
		chromedp.Click(chromedp.ID("set-limits")))
	b.waitJS(t, `!!document.querySelector('#form-error')`)
	if s := b.text(t, "#form-error"); !strings.HasPrefix(s, "cardBalanceMax:") {
		t.Errorf("limits refusal: %q", s)
	}
	if v := eval[string](t, b, `document.querySelector('#cardBalanceMax').value`); v != "12.345" {
		t.Errorf("the limits form lost what was typed: %q", v)
	}
	b.shot(t, "merchant-refused")
	for _, form := range []map[string]string{
		{"currency": "XXX", "cardBalanceMax": "1", "dailyCardIssueMax": "1"},
		{"currency": "USD", "cardBalanceMax": "-1", "dailyCardIssueMax": "1"},
		{"currency": "USD", "cardBalanceMax": "1", "dailyCardIssueMax": ""},
		{"currency": "USD", "cardBalanceMax": "12,50", "dailyCardIssueMax": "1"},
	} {
		form["csrf"] = b.csrf(t)
		if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/limits", form); got != 400 {
			t.Errorf("limits %v: %d, want 400", form, got)
		}
	}

	// BIN access: revoke the fixture's BIN, then grant it back.
	b.open(t, f.url("/operator/merchants/"+f.a.ShopNo))
	row := `tr[data-bin="453201-USD"]`
	if s := b.text(t, row+" td.open"); s != "yes" {
		t.Fatalf("453201/USD open to A: %q", s)
	}
	b.do(t, chromedp.Click(chromedp.CSS(row+" button.revoke")))
	b.waitSaved(t, "BIN access saved.")
	if s := b.text(t, row+" td.open"); s != "no" {
		t.Errorf("after revoke, open: %q", s)
	}
	var allowed bool
	if err := db.QueryRow(`select allowed from merchant_bins where merchant_id = $1 and bin = '453201' and currency = 'USD'`,
		f.a.ID).Scan(&allowed); err != nil || allowed {
		t.Errorf("after revoke: allowed %v, %v", allowed, err)
	}
	b.open(t, f.url("/operator/merchants/"+f.a.ShopNo))
	b.do(t, chromedp.Click(chromedp.CSS(row+" button.grant")))
	b.waitSaved(t, "BIN access saved.")
	if s := b.text(t, row+" td.open"); s != "yes" {
		t.Errorf("after grant, open: %q", s)
	}
	b.shot(t, "merchant-admin")
	if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/bins", map[string]string{"csrf": b.csrf(t), "bin": "999999", "currency": "USD", "mode": "allow"}); got != 400 {
		t.Errorf("an unknown BIN: %d, want 400", got)
	}
	if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/bins", map[string]string{"csrf": b.csrf(t), "bin": "453201", "currency": "USD", "mode": "open"}); got != 400 {
		t.Errorf("a bad mode: %d, want 400", got)
	}
	// Without the token nothing happens.
	if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/kyb", map[string]string{"tier": "TIER_3"}); got != 403 {
		t.Errorf("kyb without token: %d, want 403", got)
	}
	if got := b.open(t, f.url("/operator/merchants/SH0000000000")); got != 404 {
		t.Errorf("an unknown merchant: %d", got)
	}

	acts := strings.Join(f.auditActions(t), " ")
	for _, want := range []string{"merchant.whitelist:ok", "merchant.kyb:ok", "merchant.limits:ok", "merchant.bins:ok"} {
		if !strings.Contains(acts, want) {
			t.Errorf("audit trail %s lacks %s", acts, want)
		}
	}
	if err := db.QueryRow(`select kyb_tier from merchants where id = $1`, f.a.ID).Scan(&tier); err != nil || tier != "TIER_2" {
		t.Errorf("kyb tier after refusals %q, %v", tier, err)
	}
}

// The operator's and auditor's new pages refuse a merchant's user (403),
// and the auditor the operator's.
func TestNewHousePagesRefuseOtherRoles(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	for _, p := range []string{"/operator/merchants/" + f.a.ShopNo, "/audit/verify", "/audit/settlement", "/operator/holds", "/operator/bins"} {
		if got := b.open(t, f.url(p)); got != 403 {
			t.Errorf("admin on %s: %d, want 403", p, got)
		}
	}
	if got := b.post(t, "/operator/merchants/"+f.a.ShopNo+"/kyb", map[string]string{"csrf": b.csrf(t), "tier": "TIER_3"}); got != 403 {
		t.Errorf("admin sets a KYB tier: %d, want 403", got)
	}
	a := newBrowser(t)
	a.login(t, f, "aldo.auditor", f.code(t, "aldo.auditor"))
	for _, p := range []string{"/operator/merchants/" + f.a.ShopNo, "/operator/holds", "/operator/bins"} {
		if got := a.open(t, f.url(p)); got != 403 {
			t.Errorf("auditor on %s: %d, want 403", p, got)
		}
	}
	if got := a.post(t, "/operator/merchants/"+f.a.ShopNo+"/whitelist", map[string]string{"csrf": a.csrf(t), "ipWhitelist": ""}); got != 403 {
		t.Errorf("auditor sets a whitelist: %d, want 403", got)
	}
	if got := a.post(t, "/operator/bins", map[string]string{"csrf": a.csrf(t), "bin": "123456", "currency": "USD", "network": "VISA"}); got != 403 {
		t.Errorf("auditor adds a BIN: %d, want 403", got)
	}
	// The auditor's own pages are open to the auditor.
	for _, p := range []string{"/audit/verify", "/audit/settlement"} {
		if got := a.open(t, f.url(p)); got != 200 {
			t.Errorf("auditor on %s: %d, want 200", p, got)
		}
	}
}

// waitSaved waits for the notice a change redirects to, after navigating
// away from any page that showed one.
func (b *browser) waitSaved(t *testing.T, notice string) {
	t.Helper()
	b.waitJS(t, `(document.querySelector('#saved') || {}).textContent === `+jsString(notice))
}
