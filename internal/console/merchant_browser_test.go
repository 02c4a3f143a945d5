package console_test

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A merchant admin's day in the real browser: balances, cards, the bill
// paged and filtered and downloaded, a card frozen through the card domain
// and seen in the bill and the webhooks, a failed webhook replayed, the
// statement.
func TestMerchantAdminInTheBrowser(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)

	if got := b.open(t, f.url("/balances")); got != 200 || !strings.HasSuffix(b.location(t), "/login") {
		t.Fatalf("signed out, /balances: status %d at %s, want the login page", got, b.location(t))
	}
	b.shot(t, "login")
	b.login(t, f, "ann.admin", "")
	if loc := b.location(t); !strings.HasSuffix(loc, "/balances") {
		t.Fatalf("after login at %s, want /balances", loc)
	}
	// 6 × 1,000.00 deposited, 123.45 and 50.00 onto cards.
	bal := b.text(t, "#balances")
	for _, want := range []string{"5,826.55 USD", "2,500.50 EUR"} {
		if !strings.Contains(bal, want) {
			t.Errorf("balances %q lack %s", bal, want)
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll('.chart svg rect').length`); n == 0 {
		t.Error("no volume chart bars")
	}
	b.shot(t, "balances")

	// Cards: search by last four.
	b.open(t, f.url("/cards"))
	if rows := eval[int](t, b, `document.querySelectorAll('#cards tbody tr a').length`); rows != 2 {
		t.Errorf("cards page lists %d cards, want 2", rows)
	}
	b.shot(t, "cards")
	last4 := eval[string](t, b, `document.querySelector('#cards tbody tr td:nth-child(2)').textContent`)
	b.do(t, chromedp.SendKeys(chromedp.ID("q"), last4), chromedp.Click(chromedp.ID("search")))
	b.waitJS(t, `location.search.includes('q=`+last4+`')`)
	if rows := eval[int](t, b, `document.querySelectorAll('#cards tbody tr a').length`); rows != 1 {
		t.Errorf("search by last4 %s lists %d cards, want 1", last4, rows)
	}

	// The bill: 6 + 1 deposits and 2 card loads (2 lines each): 11 lines,
	// pages of 5.
	day := time.Now().UTC().Format("2006-01-02")
	b.open(t, f.url("/bill?startDate="+day+"&endDate="+day+"&size=5"))
	sum := b.text(t, "#bill-summary")
	if !strings.HasPrefix(sum, "11 lines · page 1 of 3") {
		t.Fatalf("bill summary %q", sum)
	}
	first := b.text(t, "#bill tbody tr:first-child td:first-child")
	b.shot(t, "bill")
	b.do(t, chromedp.Click(chromedp.ID("next")))
	b.waitJS(t, `location.search.includes('page=2')`)
	if sum := b.text(t, "#bill-summary"); !strings.HasPrefix(sum, "11 lines · page 2 of 3") {
		t.Fatalf("after Next: %q", sum)
	}
	if second := b.text(t, "#bill tbody tr:first-child td:first-child"); second == first {
		t.Errorf("page 2 starts with page 1's line %s", first)
	}
	// A filter the API refuses is refused here too, naming the field.
	if got := b.open(t, f.url("/bill?startDate="+day+"&endDate=2001-01-01")); got != 400 ||
		!strings.Contains(b.text(t, "#error"), "endDate") {
		t.Errorf("endDate before startDate: %d %q", got, b.text(t, "#error"))
	}
	b.open(t, f.url("/bill?startDate="+day+"&endDate="+day+"&size=5"))
	href := eval[string](t, b, `document.querySelector('#csv').getAttribute('href')`)
	body := eval[string](t, b, `fetch(`+jsString(href)+`).then(r => r.headers.get('content-disposition').startsWith('attachment') ? r.text() : 'not an attachment')`)
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, body)
	}
	if len(recs) != 12 || strings.Join(recs[0], ",") != "billId,type,amount,currency,ts,account,cardNo,txId,authId,balanceAfter,seq,billSeq,accountType,relatedTo" {
		t.Fatalf("CSV has %d records (want a header and 11), header %v", len(recs), recs[0])
	}

	// Freeze a card, with its confirmation.
	card := f.cardsA[0]
	b.open(t, f.url("/cards/"+card))
	b.shot(t, "card")
	b.do(t, chromedp.Click(chromedp.ID("freeze")), chromedp.WaitVisible(chromedp.ID("reason")))
	if f.cardStatus(t, card) != "ACTIVE" {
		t.Fatal("the confirmation page changed the card")
	}
	b.do(t, chromedp.SendKeys(chromedp.ID("reason"), "lost phone"))
	b.shot(t, "confirm")
	b.do(t, chromedp.Click(chromedp.ID("confirm")), chromedp.WaitVisible(chromedp.ID("card-status")))
	b.waitJS(t, `document.querySelector('#card-status').textContent.startsWith('FROZEN')`)
	if s := b.text(t, "#card-status"); s != "FROZEN (lost phone)" {
		t.Errorf("card status after freeze %q", s)
	}
	if s := f.cardStatus(t, card); s != "FROZEN" {
		t.Errorf("card in the database %s", s)
	}
	// The bill still adds up (a freeze moves no money), and the card's
	// lines link to it.
	b.open(t, f.url("/bill?startDate="+day+"&endDate="+day+"&size=50"))
	if sum := b.text(t, "#bill-summary"); !strings.HasPrefix(sum, "11 lines") {
		t.Errorf("bill after the freeze: %q", sum)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#bill a[href="/cards/`+card+`"]').length`); n == 0 {
		t.Error("the bill does not show the frozen card's lines")
	}

	// The webhook of the freeze, failed as a dead receiver leaves it, then
	// replayed from the page.
	if _, err := f.g.DB().DB.Exec(`update deliveries d set status = 'FAILED', attempts = 8, next_attempt_at = null, last_error = 'connection refused'
		from events e where e.merchant_id = d.merchant_id and e.event_seq = d.event_seq and e.event_type = 'card.frozen'`); err != nil {
		t.Fatal(err)
	}
	b.open(t, f.url("/events?status=FAILED"))
	ev := eval[string](t, b, `document.querySelector('#events tbody tr[data-event]').dataset.event`)
	b.shot(t, "events")
	b.do(t, chromedp.Click(chromedp.CSS(`tr[data-event="`+ev+`"] button.replay`)))
	b.waitJS(t, `location.search === ''`)
	if s := b.text(t, `tr[data-event="`+ev+`"] td.status`); s != "PENDING" {
		t.Errorf("after replay the event's delivery is %s", s)
	}

	// The statement of today reconciles.
	b.open(t, f.url("/statement?startDate="+day+"&endDate="+day))
	if s := b.text(t, "#statement-result"); !strings.HasPrefix(s, "Every account reconciles") {
		t.Errorf("statement: %q", s)
	}
	b.shot(t, "statement")

	acts := f.auditActions(t)
	for _, want := range []string{"session.login:ok", "card.freeze:ok", "event.replay:ok"} {
		if !slices.Contains(acts, want) {
			t.Errorf("audit trail %v lacks %s", acts, want)
		}
	}
	// Sign out: the session is gone from the server.
	b.do(t, chromedp.Click(chromedp.ID("logout")))
	b.waitJS(t, `location.pathname === '/login'`)
	if got := b.open(t, f.url("/balances")); got != 200 || !strings.HasSuffix(b.location(t), "/login") {
		t.Errorf("after sign-out /balances: %d at %s", got, b.location(t))
	}
}
