package app

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/cellmove"
	"github.com/paygate/gateway/postings"
)

// CodeMoving is the ISO 8583 response code of an authorization the router
// declines because the card's merchant is in a move's pause: 91, "issuer
// or switch inoperative", what an issuer answers while its system is
// unavailable, so the network may stand in or the cardholder try again
// (docs/network.md, "Authorization"). The merchant's cell does not see it;
// the source cell logs it (cellmove.RecordDecline) before it is answered.
const CodeMoving = "91"

// declinePaused answers an authorization of a card in a move's pause:
// logged in cell's database (cellmove.RecordDecline), then declined 91.
// A message whose fields the authorization would refuse goes to the cell,
// which answers it 400 naming the field, as without a move. When the log
// cannot be written, or the card is no longer paused (the move switched
// or rolled back since the router read its forwarding), nothing is
// decided: 503 with Retry-After, and the network repeats the message,
// which then reaches the card's cell. So every 91 the router answers is
// logged.
func (a *App) declinePaused(w http.ResponseWriter, r *http.Request, db bun.IDB, cell http.Handler, f *authorizeFields) {
	d, ok := moveDecline(f, time.Now())
	if !ok {
		cell.ServeHTTP(w, r)
		return
	}
	paused, err := cellmove.RecordDecline(r.Context(), db, d)
	switch {
	case err != nil:
		a.log.Warn("recording a decline of a moving merchant's card failed", "error", err.Error())
		unavailable(w, "the card's merchant is moving between cells; retry after the number of seconds in Retry-After")
	case !paused:
		unavailable(w, "the card's merchant has just moved between cells; retry after the number of seconds in Retry-After")
	default:
		declineMoving(w, f, d.DeclinedAt)
	}
}

// moveDecline is the log row of an authorization of a paused card, from
// the message's own fields, and false when a field is not what
// POST /network/authorize accepts: such a message is the cell's to refuse
// (400 naming the field), as without a move, and nothing is logged.
func moveDecline(f *authorizeFields, now time.Time) (cellmove.Decline, bool) {
	// The amount is a JSON number or a string of one, taken as decimal
	// text (no float), checked as the handler checks it (api.ParseMoney).
	text := string(f.Amount)
	var s string
	if json.Unmarshal(f.Amount, &s) == nil {
		text = s
	}
	cur, minor, err := api.ParseMoney(f.Currency, api.AmountText(text))
	if err != nil || !postings.IsRefText(f.MessageID) || api.CheckCardNo("cardNo", f.CardNo) != nil {
		return cellmove.Decline{}, false
	}
	return cellmove.Decline{MessageID: f.MessageID, CardNo: f.CardNo, Amount: minor, Currency: cur.Code, DeclinedAt: now}, true
}

// declineMoving answers an authorization of a moving merchant's card, once
// logged: a decline in the shape of POST /network/authorize's answer
// (authId null; no card currency, available, conversion or fee: the card
// was not read), the amount and currency as the message gave them.
func declineMoving(w http.ResponseWriter, f *authorizeFields, at time.Time) {
	amount := f.Amount
	if len(amount) == 0 {
		amount = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}{http.StatusOK, "success", map[string]any{
		"authId": nil, "approved": false, "code": CodeMoving,
		"reason": "the card's merchant is moving between cells: issuer unavailable, try again shortly",
		"cardNo": f.CardNo, "amount": amount, "currency": f.Currency,
		"cardAmount": nil, "fee": nil, "cardCurrency": nil, "fxRate": nil, "available": nil,
		"createdAt": api.Timestamp(at),
	}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}
