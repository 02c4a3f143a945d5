package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/console"
)

// The books and adjustments pages in the browser, as served (the CSP and
// htmx's boosted forms included): an operator sees a checkpoint and the
// closes, proposes a free adjustment through the form, and a second
// operator approves it with its row's button. The screenshots in
// docs/console.md are taken here.
func TestBooksAndAdjustmentsInTheBrowser(t *testing.T) {
	f := newFixture(t)
	f.signBooks(t, bookClose{f.a.ID, audit.PeriodMonth, "2020-01"}, bookClose{f.b.ID, audit.PeriodMonth, "2020-01"})
	f.addUser(t, console.NewUser{Login: "otto.operator", Role: console.RoleOperator})

	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.open(t, f.url("/audit/checkpoints"))
	if n := eval[int](t, b, `document.querySelectorAll('#checkpoints a.download').length`); n != 1 {
		t.Errorf("checkpoint downloads: %d", n)
	}
	b.shot(t, "checkpoints")
	b.open(t, f.url("/closes"))
	if n := eval[int](t, b, `document.querySelectorAll('#closes tbody tr[data-id]').length`); n != 2 {
		t.Errorf("closes of both merchants: %d", n)
	}
	b.shot(t, "closes")

	b.open(t, f.url("/house/adjustments"))
	b.do(t, chromedp.SendKeys(chromedp.ID("shopNo"), f.a.ShopNo), chromedp.Click(chromedp.CSS(`input[name=mode][value=free]`)),
		chromedp.SendKeys(chromedp.ID("amount"), "12.50"), chromedp.SendKeys(chromedp.ID("currency"), "USD"),
		chromedp.SendKeys(chromedp.ID("reason"), "bank fee refunded by hand"), chromedp.SendKeys(chromedp.ID("reference"), "TICKET-7"),
		chromedp.Click(chromedp.ID("propose-submit")))
	b.waitJS(t, `!!document.querySelector('#saved')`)
	if s := b.text(t, "#adjustments tbody tr .status"); s != "PROPOSED" {
		t.Errorf("after proposing: %q", s)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#adjustments button.approve').length`); n != 0 {
		t.Errorf("the maker is offered %d approve buttons on their own proposal", n)
	}
	b.shot(t, "adjustments")

	o := newBrowser(t)
	o.login(t, f, "otto.operator", f.code(t, "otto.operator"))
	o.open(t, f.url("/house/adjustments?shopNo="+f.a.ShopNo))
	o.do(t, chromedp.Click(chromedp.CSS(`#adjustments button.approve`)))
	o.waitJS(t, `!!document.querySelector('#saved')`)
	if s := o.text(t, "#adjustments tbody tr .status"); s != "APPROVED" {
		t.Errorf("after approving: %q", s)
	}
	if s := o.text(t, "#saved"); !strings.Contains(s, "approved") {
		t.Errorf("notice %q", s)
	}
}
