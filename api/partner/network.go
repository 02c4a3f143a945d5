package partner

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// The card network's messages on the internal API (docs/network.md). An
// authorization decision, approved or declined, is a success (code 200):
// the decline is in approved, code and reason of the data, because the
// network asked for a decision and got one. Amounts are decimals in the
// currency they belong to: the transaction's for what the network sent, the
// card's for what the card holds.

// Text bounds of network messages (sql/0003_network.sql).
const merchantNameCharsMax = 100

// attemptsLimitDefault is how many attempts GET /network/authorizations
// returns without a limit.
const attemptsLimitDefault = 100

// checkMessageID checks a network message id, the idempotency key of the
// message: 1 to 64 characters of [A-Za-z0-9_.:-].
func checkMessageID(s string) error {
	if !postings.IsRefText(s) {
		return postings.FieldErrorf("messageId", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'")
	}
	return nil
}

// checkDigits checks an optional code of exactly n digits (an MCC).
func checkDigits(name, s string, n int) error {
	if s == "" {
		return nil
	}
	if len(s) != n {
		return postings.FieldErrorf(name, "must be %d digits", n)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return postings.FieldErrorf(name, "must be %d digits", n)
		}
	}
	return nil
}

// checkCountry checks an optional ISO 3166 alpha-2 code.
func checkCountry(name, s string) error {
	if s == "" {
		return nil
	}
	if len(s) != 2 || !isUpper(s[0]) || !isUpper(s[1]) {
		return postings.FieldErrorf(name, "must be a two-letter upper-case ISO 3166 country code")
	}
	return nil
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// moneyOrNil renders an amount whose currency may be unknown to the
// gateway (a stored attempt): null rather than a broken answer.
func moneyOrNil(minor int64, code string) *postings.Money {
	cur, err := postings.LookupCurrency(code)
	if err != nil {
		return nil
	}
	return &postings.Money{Minor: minor, Currency: cur}
}

func rateOrNil(s string) *json.Number {
	if s == "" {
		return nil
	}
	n := json.Number(s)
	return &n
}

// decodeAuthorize decodes POST /network/authorize.
func decodeAuthorize(c *gin.Context) (network.AuthRequest, error) {
	raw, err := api.ReadBody(c)
	if err != nil {
		return network.AuthRequest{}, err
	}
	return decodeAuthorizeBody(raw, false)
}

// decodeAuthorizeBody decodes an authorization request: the network's, or
// the sandbox's, which has no messageId (sandbox.go derives it).
func decodeAuthorizeBody(raw []byte, sandbox bool) (network.AuthRequest, error) {
	var req struct {
		MessageID, CardNo, Currency, MerchantName, MCC, MerchantCountry string
		Amount                                                          api.AmountText
	}
	err := api.DecodeObject(raw, withMessageID(sandbox, &req.MessageID,
		api.NewField("cardNo", true, &req.CardNo),
		api.NewField("amount", true, &req.Amount),
		api.NewField("currency", true, &req.Currency),
		api.NewField("merchantName", false, &req.MerchantName),
		api.NewField("mcc", false, &req.MCC),
		api.NewField("merchantCountry", false, &req.MerchantCountry),
	))
	if err != nil {
		return network.AuthRequest{}, err
	}
	if err := checkMessageIDOf(sandbox, req.MessageID); err != nil {
		return network.AuthRequest{}, err
	}
	if err := api.CheckCardNo("cardNo", req.CardNo); err != nil {
		return network.AuthRequest{}, err
	}
	cur, amount, err := api.ParseMoney(req.Currency, req.Amount)
	if err != nil {
		return network.AuthRequest{}, err
	}
	if err := postings.CheckText("merchantName", req.MerchantName, merchantNameCharsMax); err != nil {
		return network.AuthRequest{}, err
	}
	if err := checkDigits("mcc", req.MCC, 4); err != nil {
		return network.AuthRequest{}, err
	}
	if err := checkCountry("merchantCountry", req.MerchantCountry); err != nil {
		return network.AuthRequest{}, err
	}
	return network.AuthRequest{MessageID: req.MessageID, CardNo: req.CardNo, Amount: amount, Currency: cur.Code,
		MerchantName: req.MerchantName, MCC: req.MCC, MerchantCountry: req.MerchantCountry}, nil
}

// withMessageID puts the required messageId before fields, unless the
// message comes from the sandbox, where the gateway makes the id and a
// messageId in the body is an unknown field.
func withMessageID(sandbox bool, into *string, fields ...api.Field) []api.Field {
	if sandbox {
		return fields
	}
	return append([]api.Field{api.NewField("messageId", true, into)}, fields...)
}

// checkMessageIDOf checks the network's message id; the sandbox has none.
func checkMessageIDOf(sandbox bool, id string) error {
	if sandbox {
		return nil
	}
	return checkMessageID(id)
}

// authorizeView is the answer of POST /network/authorize. amount is in the
// transaction's currency; cardAmount, fee and available in the card's.
// authId is null on a decline; cardCurrency and available are null for an
// unknown card; cardAmount and fee are null when the decision came before
// the conversion (14, 46, 57, 54, and 05 for a currency without a rate);
// fxRate is null unless the currencies differ.
type authorizeView struct {
	AuthID       *string         `json:"authId"`
	Approved     bool            `json:"approved"`
	Code         string          `json:"code"`
	Reason       string          `json:"reason"`
	CardNo       string          `json:"cardNo"`
	Amount       postings.Money  `json:"amount"`
	Currency     string          `json:"currency"`
	CardAmount   *postings.Money `json:"cardAmount"`
	Fee          *postings.Money `json:"fee"`
	CardCurrency *string         `json:"cardCurrency"`
	FXRate       *json.Number    `json:"fxRate"`
	Available    *postings.Money `json:"available"`
	CreatedAt    string          `json:"createdAt"`
}

func newAuthorizeView(r *network.AuthResult) authorizeView {
	v := authorizeView{
		Approved: r.Approved, Code: r.Code, Reason: r.Reason, CardNo: r.CardNo,
		Amount: api.Money(r.Amount, r.Currency), Currency: r.Currency,
		FXRate: rateOrNil(r.FXRate), CreatedAt: api.Timestamp(r.CreatedAt),
	}
	if r.AuthID != "" {
		id := r.AuthID
		v.AuthID = &id
	}
	if r.CardCurrency != "" {
		cc := r.CardCurrency
		v.CardCurrency = &cc
		v.Available = moneyOrNil(r.Available, cc)
		if r.CardAmount > 0 {
			v.CardAmount = moneyOrNil(r.CardAmount, cc)
			v.Fee = moneyOrNil(r.Fee, cc)
		}
	}
	return v
}

// handleNetworkAuthorize answers POST /network/authorize.
func handleNetworkAuthorize(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, err := decodeAuthorize(c)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		res, err := l.Authorize(c.Request.Context(), req)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, newAuthorizeView(res))
	}
}
