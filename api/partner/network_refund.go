package partner

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// decodeRefund decodes POST /network/refund.
func decodeRefund(c *gin.Context) (network.RefundRequest, error) {
	raw, err := api.ReadBody(c)
	if err != nil {
		return network.RefundRequest{}, err
	}
	return decodeRefundBody(raw, false)
}

// decodeRefundBody decodes a refund: the network's, or the sandbox's,
// which has no messageId.
func decodeRefundBody(raw []byte, sandbox bool) (network.RefundRequest, error) {
	var req struct {
		MessageID, CardNo, Currency string
		Amount                      api.AmountText
	}
	err := api.DecodeObject(raw, withMessageID(sandbox, &req.MessageID,
		api.NewField("cardNo", true, &req.CardNo),
		api.NewField("amount", true, &req.Amount),
		api.NewField("currency", true, &req.Currency),
	))
	if err != nil {
		return network.RefundRequest{}, err
	}
	if err := checkMessageIDOf(sandbox, req.MessageID); err != nil {
		return network.RefundRequest{}, err
	}
	if err := api.CheckCardNo("cardNo", req.CardNo); err != nil {
		return network.RefundRequest{}, err
	}
	cur, amount, err := api.ParseMoney(req.Currency, req.Amount)
	if err != nil {
		return network.RefundRequest{}, err
	}
	return network.RefundRequest{MessageID: req.MessageID, CardNo: req.CardNo, Amount: amount, Currency: cur.Code}, nil
}

// refundView is the answer of POST /network/refund. credited is "card" (the
// card's available balance) or "funding" (the merchant's funding account,
// for a cancelled card).
type refundView struct {
	CardNo    string         `json:"cardNo"`
	Amount    postings.Money `json:"amount"`
	Currency  string         `json:"currency"`
	Credited  string         `json:"credited"`
	Available postings.Money `json:"available"`
	CreatedAt string         `json:"createdAt"`
}

// handleNetworkRefund answers POST /network/refund.
func handleNetworkRefund(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, err := decodeRefund(c)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		res, err := l.Refund(c.Request.Context(), req)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, newRefundView(res))
	}
}

func newRefundView(res *network.RefundResult) refundView {
	return refundView{CardNo: res.CardNo, Amount: api.Money(res.Amount, res.Currency), Currency: res.Currency,
		Credited: res.Credited, Available: api.Money(res.Available, res.Currency), CreatedAt: api.Timestamp(res.CreatedAt)}
}
