package client

import (
	"context"
	"iter"
)

// Iterators over every list of the API: each walks the pages for the
// caller, one request per page, and yields every item, then stops. A
// failed request is yielded once as (zero, err) and ends the walk; the
// request was retried by the client's policy first. Breaking out of the
// loop sends no further request.
//
//	for line, err := range c.AllBillLines(ctx, client.BillQuery{StartDate: "2026-11-01", EndDate: "2026-11-30"}) {
//		if err != nil { return err }
//		…
//	}
//
// The bill and the card list are read page by page (their pages are
// stable: a line or card added during the walk never shifts one already
// read); the events by the cursor startingAfter, so an event created
// during the walk is read once, at its place in the order.

// pageSizeIter is the page size of the iterators: the API's largest.
const pageSizeIter = 500

// walkPages yields the items of fetch(1), fetch(2), … until a page is short
// of size or the items read reach total.
func walkPages[T any](fetch func(page int) ([]T, int64, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var read int64
		for page := 1; ; page++ {
			items, total, err := fetch(page)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			read += int64(len(items))
			if len(items) < pageSizeIter || read >= total {
				return
			}
		}
	}
}

// AllBillLines iterates over every line of q's range and filters (q.Page
// and q.Size are ignored).
func (c *Client) AllBillLines(ctx context.Context, q BillQuery, opts ...CallOption) iter.Seq2[BillLine, error] {
	return walkPages(func(page int) ([]BillLine, int64, error) {
		q.Page, q.Size = page, pageSizeIter
		p, err := c.Bill(ctx, q, opts...)
		if err != nil {
			return nil, 0, err
		}
		return p.List, p.Total, nil
	})
}

// AllCards iterates over every card that passes q's filters (q.Page and
// q.Size are ignored).
func (c *Client) AllCards(ctx context.Context, q CardListQuery, opts ...CallOption) iter.Seq2[Card, error] {
	return walkPages(func(page int) ([]Card, int64, error) {
		q.Page, q.Size = page, pageSizeIter
		p, err := c.ListCards(ctx, q, opts...)
		if err != nil {
			return nil, 0, err
		}
		return p.List, p.Total, nil
	})
}

// AllWebhookEvents iterates over the events q selects, in q.Order, from
// after q.StartingAfter when set (q.Page and q.Size are ignored): each
// request asks for the events after the last one read.
func (c *Client) AllWebhookEvents(ctx context.Context, q WebhookEventsQuery, opts ...CallOption) iter.Seq2[WebhookEvent, error] {
	return func(yield func(WebhookEvent, error) bool) {
		q.Page, q.Size = 0, pageSizeIter
		for {
			p, err := c.WebhookEvents(ctx, q, opts...)
			if err != nil {
				yield(WebhookEvent{}, err)
				return
			}
			for _, e := range p.List {
				if !yield(e, nil) {
					return
				}
			}
			if len(p.List) < pageSizeIter {
				return
			}
			q.StartingAfter = p.List[len(p.List)-1].EventID
		}
	}
}
