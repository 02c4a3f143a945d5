package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/delivery"
)

// An event's page lists every attempt at delivering it, readable without
// JavaScript: a refused connection, a 503, then the 200; and another
// merchant's event is the same 404 as an unknown one.
func TestEventPageListsEveryAttempt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := f.g.DB().DB
	// A's card freeze makes a card.frozen event for the merchant's URL.
	if _, err := f.g.Cards.FreezeCard(ctx, f.a.ID, f.cardsA[0], "stolen", nil); err != nil {
		t.Fatal(err)
	}
	var evID string
	if err := db.QueryRow(`select event_id from events where merchant_id = $1 and event_type = 'card.frozen'`, f.a.ID).Scan(&evID); err != nil {
		t.Fatal(err)
	}
	// Three attempts as the dispatcher records them: each claim is due at
	// once (the retry time is now), so no test waits.
	outcomes := []delivery.DeliveryOutcome{
		{Error: "connection refused", Duration: 3 * time.Millisecond},
		{Status: 503, Duration: 41 * time.Millisecond},
		{OK: true, Status: 200, Duration: 17 * time.Millisecond},
	}
	for i, o := range outcomes {
		claimed, err := f.g.Deliveries.ClaimDeliveries(ctx, 100, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var recs []delivery.DeliveryRecord
		for j := range claimed {
			oc := o
			if !o.OK {
				oc.Next = f.g.Ledger.Now()
			}
			recs = append(recs, delivery.DeliveryRecord{Delivery: &claimed[j], Outcome: oc})
		}
		if len(recs) == 0 {
			t.Fatalf("round %d claimed nothing", i)
		}
		if err := f.g.Deliveries.RecordDeliveries(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}

	b := newBrowser(t)
	b.login(t, f, "rita.readonly", "")
	b.open(t, f.url("/events"))
	b.do(t, chromedp.Click(chromedp.CSS(`tr[data-event="`+evID+`"] a`)))
	b.waitJS(t, `location.pathname === '/events/`+evID+`'`)
	rows := eval[string](t, b, `[...document.querySelectorAll('#attempts tbody tr[data-attempt]')].map(r =>
		r.dataset.attempt + '|' + r.querySelector('.answer').textContent.trim() + '|' + r.querySelector('.outcome').textContent + '|' +
		r.children[2].textContent + '|' + (r.children[5].textContent !== '')).join(',')`)
	want := "1|connection refused|PENDING|3ms|true,2|HTTP 503|PENDING|41ms|true,3|HTTP 200|DELIVERED|17ms|false"
	if rows != want {
		t.Errorf("attempts\n%s, want\n%s", rows, want)
	}
	if s := b.text(t, "#event-status"); !strings.HasPrefix(s, "DELIVERED at ") {
		t.Errorf("event status %q", s)
	}
	b.shot(t, "event")
	// Without JavaScript the same page is there (a plain GET of it).
	html := eval[string](t, b, `fetch('/events/`+evID+`').then(r => r.text())`)
	if !strings.Contains(html, `data-attempt="3"`) || !strings.Contains(html, "connection refused") {
		t.Error("the page as served lacks the attempts")
	}

	// Another merchant's event, and an unknown one: one 404.
	var evB string
	if err := db.QueryRow(`select event_id from events where merchant_id = $1 limit 1`, f.b.ID).Scan(&evB); err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, id := range []string{evB, "evt_unknown0000000000"} {
		if got := b.open(t, f.url("/events/"+id)); got != 404 {
			t.Errorf("/events/%s: %d, want 404", id, got)
		}
		pages = append(pages, eval[string](t, b, `document.querySelector('main').outerHTML`))
	}
	if pages[0] != pages[1] {
		t.Errorf("another merchant's event and an unknown one differ:\n%s\n%s", pages[0], pages[1])
	}
}
