package api

import (
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// The card list, GET /shop/card/list (docs/api.md, "Card list"): the
// merchant's cards in the order they were issued, a page at a time, the
// same card object as /shop/card/info. A card issued later never moves a
// page already read (internal/cards/list.go says why).

// Bounds of the card list: the bill's page bound, and cards.ListPageMax
// (the bill's size bound) for size.
const (
	cardListPageMax = billPageMax
	cardListSizeMax = cards.ListPageMax
)

// cardListQuery is a validated card-list request.
type cardListQuery struct {
	filter     cards.CardFilter
	page, size int
}

// cardStatuses are the values of the status filter.
var cardStatuses = []string{cards.CardActive, cards.CardFrozen, cards.CardCancelled}

// parseCardListQuery checks the query of GET /shop/card/list; every refusal
// is a 400 naming its parameter.
func parseCardListQuery(c *gin.Context) (cardListQuery, error) {
	var q cardListQuery
	var err error
	if q.page, _, err = queryInt(c, "page", 1, cardListPageMax, billPageDefault); err != nil {
		return q, err
	}
	if q.size, _, err = queryInt(c, "size", 1, cardListSizeMax, billSizeDefault); err != nil {
		return q, err
	}
	status, ok, err := queryValue(c, "status")
	if err != nil {
		return q, err
	}
	if ok {
		if !slices.Contains(cardStatuses, status) {
			return q, postings.FieldErrorf("status", "must be ACTIVE, FROZEN or CANCELLED")
		}
		q.filter.Status = status
	}
	if q.filter.Currency, err = queryCurrency(c, "currency"); err != nil {
		return q, err
	}
	from, err := queryOptionalDate(c, "createdFrom")
	if err != nil {
		return q, err
	}
	to, err := queryOptionalDate(c, "createdTo")
	if err != nil {
		return q, err
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return q, postings.FieldErrorf("createdTo", "must not be before createdFrom")
	}
	q.filter.CreatedFrom = from
	if !to.IsZero() {
		q.filter.CreatedTo = to.AddDate(0, 0, 1) // the whole last day
	}
	return q, nil
}

// queryOptionalDate reads an optional UTC day (YYYY-MM-DD), checked like the
// bill's dates; the zero time when absent.
func queryOptionalDate(c *gin.Context, name string) (time.Time, error) {
	if _, ok := c.GetQueryArray(name); !ok {
		return time.Time{}, nil
	}
	return queryDate(c, name)
}

// queryCurrency reads an optional ISO 4217 code given at most once; "" when
// absent.
func queryCurrency(c *gin.Context, name string) (string, error) {
	s, ok, err := queryValue(c, name)
	if err != nil || !ok {
		return "", err
	}
	cur, err := parseCurrency(name, s)
	if err != nil {
		return "", err
	}
	return cur.Code, nil
}

// handleCardList answers GET /shop/card/list?page=&size=&status=&currency=&createdFrom=&createdTo=.
func handleCardList(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := parseCardListQuery(c)
		if err != nil {
			writeError(c, err)
			return
		}
		p, err := l.ListCards(c.Request.Context(), merchantOf(c).ID, q.filter, q.page, q.size)
		writeResult(c, views.NewCardList, p, err)
	}
}
