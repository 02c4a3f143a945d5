package client

import (
	"context"
	"net/url"
	"strconv"
)

// CardListQuery selects a page of the merchant's cards, in the order they
// were issued (GET /shop/card/list). Zero Page and Size mean the gateway's
// defaults (1 and 50; Size at most 500). Status (ACTIVE, FROZEN,
// CANCELLED), Currency and the UTC days CreatedFrom to CreatedTo (both
// included, YYYY-MM-DD) filter when set.
type CardListQuery struct {
	Page        int    `query:"page"`
	Size        int    `query:"size"`
	Status      string `query:"status"`
	Currency    string `query:"currency"`
	CreatedFrom string `query:"createdFrom"`
	CreatedTo   string `query:"createdTo"`
}

func (q CardListQuery) values() url.Values {
	v := url.Values{}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Size > 0 {
		v.Set("size", strconv.Itoa(q.Size))
	}
	for name, s := range map[string]string{"status": q.Status, "currency": q.Currency,
		"createdFrom": q.CreatedFrom, "createdTo": q.CreatedTo} {
		if s != "" {
			v.Set(name, s)
		}
	}
	return v
}

// CardPage is a page of cards (spec 2.1's paginated structure): a card
// issued later never moves a page already read.
type CardPage struct {
	// Total is the number of cards that pass the filters.
	Total int64  `json:"total"`
	List  []Card `json:"list"`
}

// ListCards is GET /shop/card/list.
func (c *Client) ListCards(ctx context.Context, q CardListQuery, opts ...CallOption) (*CardPage, error) {
	var out CardPage
	if err := c.call(ctx, opListCards, q.values(), nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
