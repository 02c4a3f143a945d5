package app

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/paygate/gateway/api"
)

// CodeMoving is the ISO 8583 response code of an authorization the router
// declines because the card's merchant is in a move's pause: 91, "issuer
// or switch inoperative", what an issuer answers while its system is
// unavailable, so the network may stand in or the cardholder try again
// (docs/network.md, "Authorization"). Nothing of it is stored: the
// merchant's cell did not see it.
const CodeMoving = "91"

// declineMoving answers an authorization of a moving merchant's card: a
// decline in the shape of POST /network/authorize's answer (authId null;
// no card currency, available, conversion or fee: the card was not read),
// the amount and currency as the message gave them.
func declineMoving(w http.ResponseWriter, f *authorizeFields) {
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
		"createdAt": api.Timestamp(time.Now()),
	}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}
