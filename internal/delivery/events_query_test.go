package delivery_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/postings"
)

// seqs are the sequences of a page, in its order.
func seqs(p *delivery.EventPage) []int64 {
	out := make([]int64, len(p.List))
	for i, e := range p.List {
		out[i] = e.EventSeq
	}
	return out
}

// The listing's orders and cursor, with and without a filter, on a real
// merchant's events: the unfiltered path reads sequence ranges, the
// filtered one counts and skips, and both must agree on what asc, desc,
// page and startingAfter mean. An unknown cursor, like another merchant's
// event, is ENOTFOUND.
func TestListEventsOrderAndCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	// Five card.created (sequences 1..5; not sent: no URL), then two
	// card.frozen (6, 7), sent to the merchant's URL.
	var cs []*cards.Card
	for range 5 {
		cs = append(cs, f.card(t, ""))
	}
	for _, c := range cs[:2] {
		if _, err := f.l.Cards.FreezeCard(ctx, f.m.ID, c.CardNo, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	all, err := f.store.ListEvents(ctx, f.m.ID, delivery.EventQuery{Page: 1, Size: 100})
	if err != nil || all.Total != 7 || len(all.List) != 7 {
		t.Fatalf("all events: %+v, %v", all, err)
	}
	id := func(seq int64) string { return all.List[seq-1].EventID }
	created := delivery.EventFilter{Types: []string{cards.EventCardCreated}}
	tests := []struct {
		name  string
		q     delivery.EventQuery
		total int64
		want  []int64
	}{
		{"asc page 1", delivery.EventQuery{Page: 1, Size: 3}, 7, []int64{1, 2, 3}},
		{"asc page 3", delivery.EventQuery{Page: 3, Size: 3}, 7, []int64{7}},
		{"asc past the end", delivery.EventQuery{Page: 4, Size: 3}, 7, []int64{}},
		{"desc page 1", delivery.EventQuery{Order: delivery.OrderDesc, Page: 1, Size: 3}, 7, []int64{7, 6, 5}},
		{"desc page 3", delivery.EventQuery{Order: delivery.OrderDesc, Page: 3, Size: 3}, 7, []int64{1}},
		{"desc past the end", delivery.EventQuery{Order: delivery.OrderDesc, Page: 4, Size: 3}, 7, []int64{}},
		{"asc after 2", delivery.EventQuery{StartingAfter: id(2), Size: 3}, 7, []int64{3, 4, 5}},
		{"asc after the last", delivery.EventQuery{StartingAfter: id(7), Size: 3}, 7, []int64{}},
		{"desc after 6", delivery.EventQuery{Order: delivery.OrderDesc, StartingAfter: id(6), Size: 3}, 7, []int64{5, 4, 3}},
		{"desc after 2", delivery.EventQuery{Order: delivery.OrderDesc, StartingAfter: id(2), Size: 3}, 7, []int64{1}},
		{"desc after the first", delivery.EventQuery{Order: delivery.OrderDesc, StartingAfter: id(1), Size: 3}, 7, []int64{}},
		{"filtered asc page 2", delivery.EventQuery{Filter: created, Page: 2, Size: 2}, 5, []int64{3, 4}},
		{"filtered desc page 1", delivery.EventQuery{Filter: created, Order: delivery.OrderDesc, Page: 1, Size: 2}, 5, []int64{5, 4}},
		{"filtered asc after 6 (not itself a match)", delivery.EventQuery{Filter: created, StartingAfter: id(6), Size: 5}, 5, []int64{}},
		{"filtered desc after 7", delivery.EventQuery{Filter: created, Order: delivery.OrderDesc, StartingAfter: id(7), Size: 2}, 5, []int64{5, 4}},
		{"filtered asc after 3", delivery.EventQuery{Filter: created, StartingAfter: id(3), Size: 5}, 5, []int64{4, 5}},
		{"status filter desc", delivery.EventQuery{Filter: delivery.EventFilter{Status: delivery.DeliveryPending}, Order: delivery.OrderDesc,
			Page: 1, Size: 5}, 2, []int64{7, 6}},
	}
	for _, tt := range tests {
		p, err := f.store.ListEvents(ctx, f.m.ID, tt.q)
		if err != nil || p.Total != tt.total || !slices.Equal(seqs(p), tt.want) {
			t.Errorf("%s: total %d, %v (%v); want %d, %v", tt.name, p.Total, seqs(p), err, tt.total, tt.want)
		}
	}

	// Refusals: the field named; a cursor of another merchant is unknown.
	other := newFixture(t)
	other.card(t, "")
	op, err := other.store.ListEvents(ctx, other.m.ID, delivery.EventQuery{Page: 1, Size: 1})
	if err != nil || len(op.List) != 1 {
		t.Fatal(op, err)
	}
	for _, tc := range []struct {
		name  string
		q     delivery.EventQuery
		field string
	}{
		{"order", delivery.EventQuery{Order: "DESC", Page: 1, Size: 1}, "order"},
		{"cursor", delivery.EventQuery{StartingAfter: "evt 1", Size: 1}, "startingAfter"},
		{"page", delivery.EventQuery{Page: 0, Size: 1}, "page"},
	} {
		var fe *postings.Error
		if _, err := f.store.ListEvents(ctx, f.m.ID, tc.q); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a field error on %s", tc.name, err, tc.field)
		}
	}
	for _, cursor := range []string{"evt_nosuchevent", op.List[0].EventID} {
		_, err := f.store.ListEvents(ctx, f.m.ID, delivery.EventQuery{StartingAfter: cursor, Size: 1})
		if postings.ErrorCode(err) != postings.ENOTFOUND {
			t.Errorf("cursor %s: %v, want ENOTFOUND", cursor, err)
		}
	}

	// The operator's and the console's listing follow the same rules.
	desc, err := f.store.DeliveriesInOrder(ctx, f.m.ID, "", delivery.OrderDesc, 2)
	asc, err2 := f.store.DeliveriesInOrder(ctx, f.m.ID, "", delivery.OrderAsc, 2)
	if err != nil || err2 != nil || len(desc) != 2 || desc[0].EventSeq != 7 || len(asc) != 2 || asc[0].EventSeq != 1 {
		t.Errorf("DeliveriesInOrder: desc %v asc %v (%v, %v)", desc, asc, err, err2)
	}
}

// One event with its body, its delivery and every attempt; an event never
// sent has no delivery; another merchant's event is unknown.
func TestEventDetail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.recv.down.Store(true)
	f.card(t, f.recv.srv.URL)
	round(t, f.dispatcher(nil))
	ev := f.deliveries(t)[cards.EventCardCreated]
	d, err := f.store.EventDetail(ctx, f.m.ID, ev.EventID)
	if err != nil {
		t.Fatal(err)
	}
	if d.EventID != ev.EventID || len(d.Attempts) != 1 || d.Attempts[0].HTTPStatus == nil || *d.Attempts[0].HTTPStatus != 503 ||
		!strings.Contains(string(d.Payload), `"event_id": "`+ev.EventID+`"`) {
		t.Errorf("detail: %+v, payload %s", d, d.Payload)
	}
	other := newFixture(t)
	if _, err := other.store.EventDetail(ctx, other.m.ID, ev.EventID); postings.ErrorCode(err) != postings.ENOTFOUND {
		t.Errorf("another merchant's event: %v, want ENOTFOUND", err)
	}
}
