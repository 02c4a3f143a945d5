package delivery_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paygate/gateway/internal/delivery"
)

// TestEventStatusOverEndpoints: an event delivered to endpoint one and
// still failing at endpoint two lists PENDING — the worst over the enabled
// endpoints — with one delivery per endpoint in the list, the single read
// and the status filter alike; once endpoint two is disabled the event
// lists DELIVERED (endpoint one's, the one enabled endpoint), and its
// deliveries still show both.
func TestEventStatusOverEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	_, m, _, c := newCapturedShop(t, f, "Statuses")
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	two, err := f.store.CreateEndpoint(ctx, m.ID, delivery.EndpointSpec{URL: ptr(down.URL + "/two"), EventTypes: &[]string{"card.frozen"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(nil)
	round(t, d)
	round(t, d)

	list := func(status string) []delivery.DeliveryInfo {
		t.Helper()
		p, err := f.store.ListEvents(ctx, m.ID, delivery.EventQuery{Filter: delivery.EventFilter{Status: status, Types: []string{"card.frozen"}},
			Order: delivery.OrderDesc, Page: 1, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		return p.List
	}
	got := list("")
	if len(got) != 1 {
		t.Fatalf("card.frozen events: %+v", got)
	}
	ev := got[0]
	if ev.Status != delivery.DeliveryPending || len(ev.Deliveries) != 2 ||
		ev.Deliveries[0].EndpointNo != 1 || ev.Deliveries[0].Status != delivery.DeliveryDelivered ||
		ev.Deliveries[1].EndpointID != two.ID || ev.Deliveries[1].Status != delivery.DeliveryPending || ev.Deliveries[1].Attempts != 1 ||
		ev.Deliveries[1].LastAttemptAt == nil {
		t.Fatalf("delivered to endpoint one, failing at two: status %s, deliveries %+v", ev.Status, ev.Deliveries)
	}
	if ev.Attempts != 1 || ev.URL == down.URL+"/two" {
		t.Errorf("the top-level delivery fields are not endpoint one's: %+v", ev)
	}
	if n := len(list(delivery.DeliveryPending)); n != 1 {
		t.Errorf("status=PENDING found %d events, want the one failing at endpoint two", n)
	}
	if n := len(list(delivery.DeliveryDelivered)); n != 0 {
		t.Errorf("status=DELIVERED found %d events, want none", n)
	}
	one, err := f.store.Event(ctx, m.ID, ev.EventID)
	if err != nil || one.Status != delivery.DeliveryPending || len(one.Deliveries) != 2 {
		t.Fatalf("the single read: %+v, %v", one, err)
	}

	if _, err := f.store.UpdateEndpoint(ctx, m.ID, two.ID, delivery.EndpointSpec{Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	got = list(delivery.DeliveryDelivered)
	if len(got) != 1 || got[0].Status != delivery.DeliveryDelivered || len(got[0].Deliveries) != 2 {
		t.Errorf("after endpoint two is disabled: %+v", got)
	}
	// The operator's newest-first listing counts the same way.
	newest, err := f.store.Deliveries(ctx, m.ID, delivery.DeliveryDelivered, 1)
	if err != nil || len(newest) != 1 || newest[0].EventID != ev.EventID {
		t.Errorf("callbacks list --status DELIVERED: %+v, %v", newest, err)
	}
}
