package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// Text bounds of card requests.
const (
	remarkCharsMax = 255
	reasonCharsMax = 255
)

// decodeCardCreate decodes POST /shop/card/create. amount may be zero (a
// card funded later by a transfer) but not negative.
func decodeCardCreate(raw []byte, allow callbackurl.AllowList) (cards.CreateCardInput, error) {
	var req struct {
		Bin, Currency, Remark, CallbackURL string
		Amount                             amountText
	}
	err := decodeObject(raw, []field{
		{name: "bin", required: true, into: &req.Bin},
		{name: "currency", required: true, into: &req.Currency},
		{name: "amount", required: true, into: &req.Amount},
		{name: "remark", into: &req.Remark},
		{name: "callback_url", into: &req.CallbackURL},
	})
	if err != nil {
		return cards.CreateCardInput{}, err
	}
	if err := checkBIN("bin", req.Bin); err != nil {
		return cards.CreateCardInput{}, err
	}
	cur, err := parseCurrency("currency", req.Currency)
	if err != nil {
		return cards.CreateCardInput{}, err
	}
	amount, err := postings.ParseSignedAmount(string(req.Amount), cur)
	if err != nil {
		return cards.CreateCardInput{}, postings.WithField(err, "amount")
	}
	if amount < 0 {
		return cards.CreateCardInput{}, postings.FieldErrorf("amount", "must not be negative")
	}
	if err := postings.CheckText("remark", req.Remark, remarkCharsMax); err != nil {
		return cards.CreateCardInput{}, err
	}
	if req.CallbackURL != "" {
		if err := checkCallbackURL("callback_url", req.CallbackURL, allow); err != nil {
			return cards.CreateCardInput{}, err
		}
	}
	return cards.CreateCardInput{Bin: req.Bin, Currency: cur.Code, Amount: amount,
		Remark: req.Remark, CallbackURL: req.CallbackURL}, nil
}

// handleCardCreate answers POST /shop/card/create: issues a card and funds
// it from the funding account of its currency.
func handleCardCreate(l Cards, allow callbackurl.AllowList) gin.HandlerFunc {
	return func(c *gin.Context) {
		in, err := decodeCardCreate(bodyOf(c), allow)
		if err != nil {
			writeError(c, err)
			return
		}
		card, err := l.CreateCard(c.Request.Context(), merchantOf(c).ID, in, idempotencyOf(c))
		writeResult(c, views.NewCard, card, err)
	}
}
