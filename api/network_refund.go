package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// decodeRefund decodes POST /network/refund.
func decodeRefund(c *gin.Context) (network.RefundRequest, error) {
	raw, err := readBody(c)
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
		Amount                      amountText
	}
	err := decodeObject(raw, withMessageID(sandbox, &req.MessageID,
		field{name: "cardNo", required: true, into: &req.CardNo},
		field{name: "amount", required: true, into: &req.Amount},
		field{name: "currency", required: true, into: &req.Currency},
	))
	if err != nil {
		return network.RefundRequest{}, err
	}
	if err := checkMessageIDOf(sandbox, req.MessageID); err != nil {
		return network.RefundRequest{}, err
	}
	if err := checkCardNo("cardNo", req.CardNo); err != nil {
		return network.RefundRequest{}, err
	}
	cur, amount, err := parseMoney(req.Currency, req.Amount)
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
			writeError(c, err)
			return
		}
		res, err := l.Refund(c.Request.Context(), req)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newRefundView(res))
	}
}

func newRefundView(res *network.RefundResult) refundView {
	return refundView{CardNo: res.CardNo, Amount: money(res.Amount, res.Currency), Currency: res.Currency,
		Credited: res.Credited, Available: money(res.Available, res.Currency), CreatedAt: timestamp(res.CreatedAt)}
}
