package api

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

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

// transferView is the answer of POST /shop/card/transfer. fxRate, midRate
// and spreadBps appear only on a cross-currency transfer.
type transferView struct {
	TxID           string         `json:"txId"`
	CardNo         string         `json:"cardNo"`
	Direction      string         `json:"direction"`
	Amount         postings.Money `json:"amount"`
	Currency       string         `json:"currency"`
	CardAmount     postings.Money `json:"cardAmount"`
	CardCurrency   string         `json:"cardCurrency"`
	FXRate         json.Number    `json:"fxRate,omitempty"`
	MidRate        json.Number    `json:"midRate,omitempty"`
	SpreadBps      *int64         `json:"spreadBps,omitempty"`
	CardBalance    postings.Money `json:"cardBalance"`
	FundingBalance postings.Money `json:"fundingBalance"`
	CreatedAt      string         `json:"createdAt"`
}

func newTransferView(r *cards.TransferResult) transferView {
	v := transferView{
		TxID: r.TxID, CardNo: r.CardNo, Direction: r.Direction,
		Amount: money(r.Amount, r.Currency), Currency: r.Currency,
		CardAmount: money(r.CardAmount, r.CardCurrency), CardCurrency: r.CardCurrency,
		CardBalance:    money(r.CardBalance, r.CardCurrency),
		FundingBalance: money(r.FundingBalance, r.Currency),
		CreatedAt:      timestamp(r.CreatedAt),
	}
	if r.CardCurrency != r.Currency {
		v.FXRate, v.MidRate = json.Number(r.FXRate), json.Number(r.MidRate)
		bps := r.SpreadBps
		v.SpreadBps = &bps
	}
	return v
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
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newTransferView(res))
	}
}
