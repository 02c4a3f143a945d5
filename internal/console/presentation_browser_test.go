package console_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The console at a 1366-px wide screen (the common laptop): every amount
// and hash on one line, negative amounts marked, the operator's header on
// one line, the beneficiary on the remittance list, every date filter an
// ISO date input, and the balance chart with its axes.
func TestPresentationAt1366(t *testing.T) {
	f := newFixture(t)
	f.remit(t, f.a.ID, "DE89370400440532013000", "")

	// What a page must not have: an amount or a hash drawn on two lines
	// (a wrapped inline element has more than one box).
	wrapped := func(b *browser) string {
		return eval[string](t, b, `[...document.querySelectorAll('.amt, code.hash, td.num, td.benef')].filter(e => e.getClientRects().length > 1 || (e.tagName === 'TD' && e.getBoundingClientRect().height > 40)).map(e => e.textContent).join(' | ')`)
	}
	// Every date filter: an <input type="date"> holding YYYY-MM-DD or nothing.
	notISO := func(b *browser) string {
		return eval[string](t, b, `[...document.querySelectorAll('form.filters input, form input[name$="Date"], form input[name=from], form input[name=to]')].filter(e => /date|^from$|^to$/i.test(e.name) && e.type !== 'number').filter(e => e.type !== 'date' || !/^(\d{4}-\d{2}-\d{2})?$/.test(e.value)).map(e => e.name + '=' + e.type).join(',')`)
	}
	wide := chromedp.EmulateViewport(1366, 900)

	b := newBrowser(t)
	b.login(t, f, "fred.finance", "")
	b.do(t, wide)
	for _, page := range []string{"/balances", "/cards", "/bill", "/statement", "/reports/balance", "/remittances"} {
		b.open(t, f.url(page))
		if s := wrapped(b); s != "" {
			t.Errorf("%s at 1366 px wraps %s", page, s)
		}
		if s := notISO(b); s != "" {
			t.Errorf("%s: date filters not ISO date inputs: %s", page, s)
		}
		if n := eval[int](t, b, `document.querySelectorAll('header').length ? document.querySelector('header').getBoundingClientRect().height | 0 : 0`); n > 48 {
			t.Errorf("%s: the header is %d px high: more than one line", page, n)
		}
	}

	// Negative amounts: a minus sign and the neg class, drawn in another
	// colour than a positive one.
	b.open(t, f.url("/bill"))
	neg := eval[string](t, b, `[...document.querySelectorAll('#bill .amt.neg, table .amt.neg')].map(e => e.textContent).join('|')`)
	if neg == "" || !regexp.MustCompile(`^-[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2} [A-Z]{3}`).MatchString(neg) {
		t.Errorf("negative amounts on the bill: %q", neg)
	}
	if eval[bool](t, b, `(n => !n || getComputedStyle(n).color === getComputedStyle(document.querySelector('.amt:not(.neg)')).color)(document.querySelector('.amt.neg'))`) {
		t.Error("a negative amount has the colour of a positive one")
	}

	// The beneficiary on the list: its name and country.
	b.open(t, f.url("/remittances"))
	if s := b.text(t, "#remittances tbody tr[data-tx] td.benef"); s != "Hans Muster GmbH · DE" {
		t.Errorf("beneficiary on the list: %q", s)
	}
	if h := eval[string](t, b, `document.querySelector('#remittances thead').textContent`); !strings.Contains(h, "Beneficiary") {
		t.Errorf("list heading %q", h)
	}

	// The chart: the currency, amount ticks and day ticks.
	b.open(t, f.url("/balances"))
	for sel, min := range map[string]int{".chart svg text.ytick": 2, ".chart svg text.xtick": 6, ".chart svg line.axis": 2, ".chart svg text.axis-title": 2} {
		if n := eval[int](t, b, `document.querySelectorAll('`+sel+`').length`); n < min {
			t.Errorf("%s: %d, want at least %d", sel, n, min)
		}
	}

	// The operator: the longest menu, on one line; the journal's hashes
	// shortened, whole in their title, on one line.
	o := newBrowser(t)
	o.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	o.do(t, wide)
	for _, page := range []string{"/operator/merchants", "/audit/journal?shopNo=" + f.a.ShopNo, "/audit/statement", "/audit/settlement", "/audit/bank", "/audit/rail", "/audit/refunds", "/house/adjustments"} {
		o.open(t, f.url(page))
		// Their middles within a few pixels of each other: one line.
		spread := eval[int](t, o, `(m => Math.max(...m) - Math.min(...m))([...document.querySelectorAll('header .brand, header nav a, #who, #logout')].map(e => e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2)) | 0`)
		if spread > 6 {
			t.Errorf("%s: the operator's header items are %d px apart in height: more than one line", page, spread)
		}
		if n := eval[int](t, o, `document.querySelector('header').getBoundingClientRect().height | 0`); n > 48 {
			t.Errorf("%s: the operator's header is %d px high", page, n)
		}
		if over := eval[string](t, o, `(n => n.scrollWidth > n.clientWidth ? n.scrollWidth + ' in ' + n.clientWidth : '')(document.querySelector('header nav'))`); over != "" {
			t.Errorf("%s: the operator's menu does not fit at 1366 px: %s px", page, over)
		}
		if s := wrapped(o); s != "" {
			t.Errorf("%s at 1366 px wraps %s", page, s)
		}
		if s := notISO(o); s != "" {
			t.Errorf("%s: date filters not ISO date inputs: %s", page, s)
		}
	}
	o.open(t, f.url("/audit/journal?shopNo="+f.a.ShopNo))
	if s := eval[string](t, o, `(e => e ? e.title.length + ':' + e.textContent.length : '')(document.querySelector('#journal code.hash'))`); s != "64:17" {
		t.Errorf("journal hash (title length:shown length) %q, want 64:17", s)
	}

}
