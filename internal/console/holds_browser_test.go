package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/console"
)

// Holds near expiry: the open authorizations whose hold expires within the
// chosen window, soonest first, paged; cleared ones and later ones are not
// listed.

func TestHoldsNearExpiry(t *testing.T) {
	t.Cleanup(console.SetHoldsPageMax(2))
	f := newFixture(t)
	card := f.cardsA[0]
	now := f.clock.Now()
	ids := map[string]string{}
	for name, in := range map[string]time.Duration{"overdue": -time.Hour, "soon": 2 * time.Hour, "today": 20 * time.Hour,
		"later": 30 * time.Hour, "cleared": time.Hour} {
		id := f.authorizeAndClear(t, card, "h-"+name, 1_00, name == "cleared")
		ids[name] = id
		if _, err := f.g.DB().DB.Exec(`update authorizations set expires_at = $1 where auth_id = $2`, now.Add(in), id); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.open(t, f.url("/operator/holds"))
	listed := func() string {
		return eval[string](t, b, `[...document.querySelectorAll('#holds tbody tr[data-auth]')].map(r => r.dataset.auth).join(',')`)
	}
	// 24 h, two a page: overdue and soon, then today.
	if got := listed(); got != ids["overdue"]+","+ids["soon"] {
		t.Errorf("first page %s, want overdue, soon", got)
	}
	if s := b.text(t, `tr[data-auth="`+ids["overdue"]+`"]`); !strings.Contains(s, "overdue") || !strings.Contains(s, f.a.ShopNo) {
		t.Errorf("overdue row: %q", s)
	}
	b.shot(t, "holds")
	b.do(t, chromedp.Click(chromedp.ID("holds-next")))
	b.waitJS(t, `location.search.includes('afterId')`)
	if got := listed(); got != ids["today"] {
		t.Errorf("second page %s, want today", got)
	}
	// 72 h takes the later one too; 1 h only the overdue one.
	b.open(t, f.url("/operator/holds?within=72h"))
	b.do(t, chromedp.Click(chromedp.ID("holds-next")))
	b.waitJS(t, `location.search.includes('afterId')`)
	if got := listed(); got != ids["today"]+","+ids["later"] {
		t.Errorf("72h second page %s", got)
	}
	b.open(t, f.url("/operator/holds?within=1h"))
	if got := listed(); got != ids["overdue"] {
		t.Errorf("1h: %s", got)
	}
	for _, q := range []string{"within=2h", "within=24h&afterAt=x&afterId=" + ids["soon"], "within=24h&afterAt=1&afterId=auth_1'"} {
		if got := b.open(t, f.url("/operator/holds?"+q)); got != 400 {
			t.Errorf("%s: %d, want 400", q, got)
		}
	}
}
