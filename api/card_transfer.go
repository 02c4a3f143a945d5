package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// decodeTransfer decodes POST /shop/card/transfer. amount is positive, in
// currency (the funding side).
func decodeTransfer(raw []byte) (cards.TransferInput, error) {
	var req struct {
		CardNo, Currency, Direction string
		Amount                      amountText
	}
	err := decodeObject(raw, []field{
		{name: "cardNo", required: true, into: &req.CardNo},
		{name: "amount", required: true, into: &req.Amount},
		{name: "currency", required: true, into: &req.Currency},
		{name: "direction", required: true, into: &req.Direction},
	})
	if err != nil {
		return cards.TransferInput{}, err
	}
	if err := checkCardNo("cardNo", req.CardNo); err != nil {
		return cards.TransferInput{}, err
	}
	cur, amount, err := parseMoney(req.Currency, req.Amount)
	if err != nil {
		return cards.TransferInput{}, err
	}
	if req.Direction != cards.DirectionIn && req.Direction != cards.DirectionOut {
		return cards.TransferInput{}, postings.FieldErrorf("direction", "must be IN or OUT")
	}
	return cards.TransferInput{CardNo: req.CardNo, Amount: amount, Currency: cur.Code, Direction: req.Direction}, nil
}

// handleCardTransfer answers POST /shop/card/transfer.
func handleCardTransfer(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		in, err := decodeTransfer(bodyOf(c))
		if err != nil {
			writeError(c, err)
			return
		}
		res, err := l.Transfer(c.Request.Context(), merchantOf(c).ID, in, idempotencyOf(c))
		writeResult(c, views.NewTransfer, res, err)
	}
}
