package api

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// queryCardNo reads the cardNo query parameter of the GET card endpoints.
func queryCardNo(c *gin.Context) (string, error) {
	cardNo, ok := c.GetQuery("cardNo")
	if !ok || cardNo == "" {
		return "", postings.FieldErrorf("cardNo", "query parameter is required")
	}
	return cardNo, checkCardNo("cardNo", cardNo)
}

// handleCardInfo answers GET /shop/card/info?cardNo=.
func handleCardInfo(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNo, err := queryCardNo(c)
		if err != nil {
			writeError(c, err)
			return
		}
		card, err := l.Card(c.Request.Context(), merchantOf(c).ID, cardNo)
		writeResult(c, views.NewCard, card, err)
	}
}

// handleCardBalance answers GET /shop/card/balance?cardNo=.
func handleCardBalance(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNo, err := queryCardNo(c)
		if err != nil {
			writeError(c, err)
			return
		}
		card, err := l.Card(c.Request.Context(), merchantOf(c).ID, cardNo)
		writeResult(c, views.NewCardBalance, card, err)
	}
}

// decodeCardNos decodes POST /shop/card/balance/batch: 1 to cards.CardsMax
// card tokens. Duplicates are allowed.
func decodeCardNos(raw []byte) ([]string, error) {
	var cardNos []string
	err := decodeObject(raw, []field{{name: "cardNos", required: true, into: &cardNos, itemsMax: cards.CardsMax}})
	if err != nil {
		return nil, err
	}
	if len(cardNos) == 0 {
		return nil, postings.FieldErrorf("cardNos", "must list 1 to %d card numbers", cards.CardsMax)
	}
	for i, n := range cardNos {
		if err := checkCardNo(fmt.Sprintf("cardNos[%d]", i), n); err != nil {
			return nil, err
		}
	}
	return cardNos, nil
}

// handleCardBalanceBatch answers POST /shop/card/balance/batch: one item per
// requested card number, in the order of the request, duplicates repeated.
func handleCardBalanceBatch(l Cards, keys ReadKeys) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNos, err := decodeCardNos(bodyOf(c))
		if err != nil {
			writeError(c, err)
			return
		}
		// A read: its key is checked and claimed, so that it serves no
		// other request, but its answer is not stored (docs/api.md).
		if err := keys.ClaimReadIdempotency(c.Request.Context(), merchantOf(c).ID, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		unique := make([]string, 0, len(cardNos))
		seen := make(map[string]bool, len(cardNos))
		for _, n := range cardNos {
			if !seen[n] {
				seen[n] = true
				unique = append(unique, n)
			}
		}
		cards, err := l.Cards(c.Request.Context(), merchantOf(c).ID, unique)
		if err != nil {
			writeError(c, err)
			return
		}
		list := make([]views.BatchItem, len(cardNos))
		for i, n := range cardNos {
			list[i] = views.NewBatchItem(n, cards[n]) // nil when absent: not found
		}
		writeOK(c, gin.H{"list": list})
	}
}
