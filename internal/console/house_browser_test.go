package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The house's roles in the browser: TOTP required, the operator's
// merchants, rates and stuck work, the auditor's journal, hash recompute,
// audit verify and audit trail.

func TestOperatorSignsInWithTOTPOnly(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	if msg := b.tryLogin(t, f, "olga.operator", password, ""); msg == "" {
		t.Fatal("an operator signed in without a TOTP code")
	}
	if msg := b.tryLogin(t, f, "olga.operator", password, "000000"); msg == "" && f.code(t, "olga.operator") != "000000" {
		t.Fatal("an operator signed in with a wrong code")
	}
	code := f.code(t, "olga.operator")
	if msg := b.tryLogin(t, f, "olga.operator", password, code); msg != "" {
		t.Fatalf("the right code: %q", msg)
	}
	// The same code again (seen over a shoulder) is refused.
	b2 := newBrowser(t)
	if msg := b2.tryLogin(t, f, "olga.operator", password, code); msg == "" {
		t.Error("a TOTP code was accepted twice")
	}
}

func TestOperatorPages(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	if loc := b.location(t); !strings.HasSuffix(loc, "/operator/merchants") {
		t.Fatalf("operator lands on %s", loc)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#merchants tbody tr[data-shop]').length`); n != 2 {
		t.Errorf("%d merchants listed, want 2", n)
	}
	// Create a merchant: the keys are shown once.
	b.do(t, chromedp.SendKeys(chromedp.ID("name"), "Corner Café"), chromedp.SendKeys(chromedp.ID("currencies"), "usd, gbp"),
		chromedp.Click(chromedp.ID("create")), chromedp.WaitVisible(chromedp.ID("created")))
	shop := b.text(t, "#created-shop")
	m, err := f.g.MerchantByShopNo(b.ctx, shop)
	if err != nil || m.Name != "Corner Café" || strings.Join(m.Currencies, ",") != "USD,GBP" {
		t.Fatalf("created merchant %+v, %v", m, err)
	}
	b.shot(t, "merchants")
	// Disable it, through the ledger's command.
	b.open(t, f.url("/operator/merchants"))
	b.do(t, chromedp.Click(chromedp.CSS(`tr[data-shop="`+shop+`"] button`)))
	b.waitJS(t, `(document.querySelector('tr[data-shop="`+shop+`"] td.status') || {}).textContent === 'DISABLED'`)
	if m, _ := f.g.MerchantByShopNo(b.ctx, shop); m.Status != "DISABLED" {
		t.Errorf("merchant is %s", m.Status)
	}
	if got := b.open(t, f.url("/operator/rates")); got != 200 || eval[int](t, b, `document.querySelectorAll('#rates tbody tr').length`) == 0 {
		t.Errorf("rates page: %d", got)
	}
	b.shot(t, "rates")
	// A failed callback shows as stuck.
	if _, err := f.g.Cards.FreezeCard(b.ctx, f.b.ID, f.cardB, "test", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.DB().DB.Exec(`update deliveries set status = 'FAILED', attempts = 8, next_attempt_at = null,
		last_error = 'connection refused' where merchant_id = $1`, f.b.ID); err != nil {
		t.Fatal(err)
	}
	b.open(t, f.url("/operator/stuck"))
	if s := b.text(t, "#stuck-callbacks"); !strings.Contains(s, f.b.ShopNo) || !strings.Contains(s, "connection refused") {
		t.Errorf("stuck callbacks: %q", s)
	}
	b.shot(t, "stuck")
	acts := strings.Join(f.auditActions(t), " ")
	for _, want := range []string{"merchant.create:ok", "merchant.disable:ok"} {
		if !strings.Contains(acts, want) {
			t.Errorf("audit trail %s lacks %s", acts, want)
		}
	}
	// A posted creation without the token creates nothing.
	if got := b.post(t, "/operator/merchants", map[string]string{"name": "Sneaky", "currencies": "USD"}); got != 403 {
		t.Errorf("merchant create without token: %d", got)
	}
}

func TestAuditorPages(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "aldo.auditor", f.code(t, "aldo.auditor"))
	if got := b.open(t, f.url("/operator/merchants")); got != 403 {
		t.Errorf("auditor on the operator's merchants: %d, want 403", got)
	}
	if got := b.open(t, f.url("/balances")); got != 403 {
		t.Errorf("auditor on a merchant page: %d, want 403", got)
	}
	b.open(t, f.url("/audit/journal?shopNo="+f.a.ShopNo))
	n := eval[int](t, b, `document.querySelectorAll('#journal tbody tr').length`)
	if n < 9 {
		t.Fatalf("journal of A lists %d entries", n)
	}
	b.shot(t, "journal")
	// Recompute entry 2: its previous hash is entry 1's hash.
	// (the journal shows a hash shortened, the whole one in its title)
	prev := eval[string](t, b, `document.querySelector('#journal tbody tr:nth-child(1) td:nth-child(6) code.hash').title`)
	b.open(t, f.url("/audit/journal/"+f.a.ShopNo+"/2"))
	if s := b.text(t, "#hash-result"); s != "The recomputed hash equals the stored one. The previous hash links to the previous entry." {
		t.Errorf("recompute: %q", s)
	}
	if got := eval[string](t, b, `document.querySelectorAll('#entry dd.hash')[1].textContent`); got != prev {
		t.Errorf("previous entry's hash %q, journal shows %q", got, prev)
	}
	b.shot(t, "entry")

	// audit verify from the page: OK, then a tampered balance is named.
	b.open(t, f.url("/audit/verify"))
	b.do(t, chromedp.Click(chromedp.ID("run-verify")))
	b.waitJS(t, `!!document.querySelector('#verify-result')`)
	if s := b.text(t, "#verify-result"); s != "OK: the journal verifies." {
		t.Fatalf("verify: %q", s)
	}
	b.shot(t, "verify")
	if _, err := f.g.DB().DB.Exec(`update balances set balance = balance + 1 where account_id = (
		select id from accounts where merchant_id = $1 and type = 'funding' and currency = 'EUR')`, f.a.ID); err != nil {
		t.Fatal(err)
	}
	b.open(t, f.url("/audit/verify"))
	b.do(t, chromedp.SendKeys(chromedp.ID("shopNo"), f.a.ShopNo), chromedp.Click(chromedp.ID("run-verify")))
	b.waitJS(t, `!!document.querySelector('#verify-result')`)
	if s := b.text(t, "#verify-result"); !strings.HasPrefix(s, "BROKEN") || !strings.Contains(b.text(t, "#breaks"), "BREAK") {
		t.Errorf("verify after tampering: %q", s)
	}

	b.open(t, f.url("/audit/trail"))
	trail := b.text(t, "#trail")
	if !strings.Contains(trail, "audit.verify") || !strings.Contains(trail, "aldo.auditor") {
		t.Errorf("audit trail page: %q", trail)
	}
	b.shot(t, "trail")
	// The trail is append-only in the database itself.
	if _, err := f.g.DB().DB.Exec(`delete from console_audit`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("delete from console_audit: %v", err)
	}
	if _, err := f.g.DB().DB.Exec(`update console_audit set login = 'x'`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("update console_audit: %v", err)
	}
}
