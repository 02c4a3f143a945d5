package partner

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// holdMessage is the body of a clearing or a reversal: the amount, in the
// authorization's transaction currency, is parsed once that currency is
// known.
type holdMessage struct {
	MessageID, AuthID string
	Amount            api.AmountText
	hasAmount         bool
}

// amountAbsent marks an amount the body did not carry (or carried as null).
const amountAbsent api.AmountText = "\x00absent"

func decodeHoldMessage(c *gin.Context, amountRequired bool) (holdMessage, error) {
	raw, err := api.ReadBody(c)
	if err != nil {
		return holdMessage{}, err
	}
	return decodeHoldBody(raw, amountRequired, false)
}

// decodeHoldBody decodes a clearing or a reversal: the network's, or the
// sandbox's capture or reversal, which has no messageId.
func decodeHoldBody(raw []byte, amountRequired, sandbox bool) (holdMessage, error) {
	m := holdMessage{Amount: amountAbsent}
	err := api.DecodeObject(raw, withMessageID(sandbox, &m.MessageID,
		api.NewField("authId", true, &m.AuthID),
		api.NewField("amount", amountRequired, &m.Amount),
	))
	if err != nil {
		return holdMessage{}, err
	}
	if err := checkMessageIDOf(sandbox, m.MessageID); err != nil {
		return holdMessage{}, err
	}
	if !postings.IsRefText(m.AuthID) {
		return holdMessage{}, postings.FieldErrorf("authId", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'")
	}
	m.hasAmount = m.Amount != amountAbsent
	return m, nil
}

// txnAmount parses the message's amount in the currency of the
// authorization's transaction; an unknown authorization is 1201.
func (m holdMessage) txnAmount(c *gin.Context, l Network) (int64, error) {
	a, err := l.Authorization(c.Request.Context(), m.AuthID)
	if err != nil {
		return 0, err
	}
	return m.amountOf(a)
}

// amountOf parses the message's amount in the transaction currency of a.
func (m holdMessage) amountOf(a *network.Authorization) (int64, error) {
	cur, err := postings.LookupCurrency(a.TxnCurrency)
	if err != nil {
		return 0, err
	}
	amount, err := postings.ParseAmount(string(m.Amount), cur)
	if err != nil {
		return 0, postings.WithField(err, "amount")
	}
	return amount, nil
}

// holdView is what a clearing or a reversal did to a hold, in the card's
// currency: captured (paid to the network), fee (the cross-border fee
// booked with the capture), released (given back by this message),
// receivable (what the card could not cover and now owes), held (still on
// hold) and the card's available balance after.
type holdView struct {
	AuthID     string         `json:"authId"`
	CardNo     string         `json:"cardNo"`
	Status     string         `json:"status"`
	Currency   string         `json:"currency"`
	Captured   postings.Money `json:"captured"`
	Fee        postings.Money `json:"fee"`
	Released   postings.Money `json:"released"`
	Receivable postings.Money `json:"receivable"`
	Held       postings.Money `json:"held"`
	Available  postings.Money `json:"available"`
	CreatedAt  string         `json:"createdAt"`
}

func newHoldView(r *network.HoldResult) holdView {
	return holdView{
		AuthID: r.AuthID, CardNo: r.CardNo, Status: r.Status, Currency: r.Currency,
		Captured: api.Money(r.Captured, r.Currency), Fee: api.Money(r.Fee, r.Currency),
		Released: api.Money(r.Released, r.Currency), Receivable: api.Money(r.Receivable, r.Currency),
		Held: api.Money(r.Held, r.Currency), Available: api.Money(r.Available, r.Currency),
		CreatedAt: api.Timestamp(r.CreatedAt),
	}
}

// handleNetworkClear answers POST /network/clear.
func handleNetworkClear(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		m, err := decodeHoldMessage(c, true)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		amount, err := m.txnAmount(c, l)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		res, err := l.Clear(c.Request.Context(), network.ClearRequest{MessageID: m.MessageID, AuthID: m.AuthID, Amount: amount})
		if err != nil {
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, newHoldView(res))
	}
}

// handleNetworkReverse answers POST /network/reverse: without an amount the
// whole hold is released.
func handleNetworkReverse(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		m, err := decodeHoldMessage(c, false)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		req := network.ReverseRequest{MessageID: m.MessageID, AuthID: m.AuthID}
		if m.hasAmount {
			if req.Amount, err = m.txnAmount(c, l); err != nil {
				api.WriteError(c, err)
				return
			}
		}
		res, err := l.Reverse(c.Request.Context(), req)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, newHoldView(res))
	}
}
