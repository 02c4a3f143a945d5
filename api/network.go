package api

import (
	"encoding/json"
	"strconv"

	"github.com/gin-gonic/gin"

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
	var req struct {
		MessageID, CardNo, Currency, MerchantName, MCC, MerchantCountry string
		Amount                                                          amountText
	}
	err := readInternalBody(c, []field{
		{name: "messageId", required: true, into: &req.MessageID},
		{name: "cardNo", required: true, into: &req.CardNo},
		{name: "amount", required: true, into: &req.Amount},
		{name: "currency", required: true, into: &req.Currency},
		{name: "merchantName", into: &req.MerchantName},
		{name: "mcc", into: &req.MCC},
		{name: "merchantCountry", into: &req.MerchantCountry},
	})
	if err != nil {
		return network.AuthRequest{}, err
	}
	if err := checkMessageID(req.MessageID); err != nil {
		return network.AuthRequest{}, err
	}
	if err := checkCardNo("cardNo", req.CardNo); err != nil {
		return network.AuthRequest{}, err
	}
	cur, amount, err := parseMoney(req.Currency, req.Amount)
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
		Amount: money(r.Amount, r.Currency), Currency: r.Currency,
		FXRate: rateOrNil(r.FXRate), CreatedAt: timestamp(r.CreatedAt),
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
			writeError(c, err)
			return
		}
		res, err := l.Authorize(c.Request.Context(), req)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newAuthorizeView(res))
	}
}

// holdMessage is the body of a clearing or a reversal: the amount, in the
// authorization's transaction currency, is parsed once that currency is
// known.
type holdMessage struct {
	MessageID, AuthID string
	Amount            amountText
	hasAmount         bool
}

// amountAbsent marks an amount the body did not carry (or carried as null).
const amountAbsent amountText = "\x00absent"

func decodeHoldMessage(c *gin.Context, amountRequired bool) (holdMessage, error) {
	m := holdMessage{Amount: amountAbsent}
	err := readInternalBody(c, []field{
		{name: "messageId", required: true, into: &m.MessageID},
		{name: "authId", required: true, into: &m.AuthID},
		{name: "amount", required: amountRequired, into: &m.Amount},
	})
	if err != nil {
		return holdMessage{}, err
	}
	if err := checkMessageID(m.MessageID); err != nil {
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
		Captured: money(r.Captured, r.Currency), Fee: money(r.Fee, r.Currency),
		Released: money(r.Released, r.Currency), Receivable: money(r.Receivable, r.Currency),
		Held: money(r.Held, r.Currency), Available: money(r.Available, r.Currency),
		CreatedAt: timestamp(r.CreatedAt),
	}
}

// handleNetworkClear answers POST /network/clear.
func handleNetworkClear(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		m, err := decodeHoldMessage(c, true)
		if err != nil {
			writeError(c, err)
			return
		}
		amount, err := m.txnAmount(c, l)
		if err != nil {
			writeError(c, err)
			return
		}
		res, err := l.Clear(c.Request.Context(), network.ClearRequest{MessageID: m.MessageID, AuthID: m.AuthID, Amount: amount})
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newHoldView(res))
	}
}

// handleNetworkReverse answers POST /network/reverse: without an amount the
// whole hold is released.
func handleNetworkReverse(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		m, err := decodeHoldMessage(c, false)
		if err != nil {
			writeError(c, err)
			return
		}
		req := network.ReverseRequest{MessageID: m.MessageID, AuthID: m.AuthID}
		if m.hasAmount {
			if req.Amount, err = m.txnAmount(c, l); err != nil {
				writeError(c, err)
				return
			}
		}
		res, err := l.Reverse(c.Request.Context(), req)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newHoldView(res))
	}
}

// decodeRefund decodes POST /network/refund.
func decodeRefund(c *gin.Context) (network.RefundRequest, error) {
	var req struct {
		MessageID, CardNo, Currency string
		Amount                      amountText
	}
	err := readInternalBody(c, []field{
		{name: "messageId", required: true, into: &req.MessageID},
		{name: "cardNo", required: true, into: &req.CardNo},
		{name: "amount", required: true, into: &req.Amount},
		{name: "currency", required: true, into: &req.Currency},
	})
	if err != nil {
		return network.RefundRequest{}, err
	}
	if err := checkMessageID(req.MessageID); err != nil {
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
		writeOK(c, refundView{CardNo: res.CardNo, Amount: money(res.Amount, res.Currency), Currency: res.Currency,
			Credited: res.Credited, Available: money(res.Available, res.Currency), CreatedAt: timestamp(res.CreatedAt)})
	}
}

// attemptView is one authorization attempt. status is the hold's current
// status for an approval, null for a decline.
type attemptView struct {
	MessageID       string          `json:"messageId"`
	CardNo          string          `json:"cardNo"`
	Approved        bool            `json:"approved"`
	Code            string          `json:"code"`
	Reason          string          `json:"reason"`
	AuthID          *string         `json:"authId"`
	Status          *string         `json:"status"`
	Amount          *postings.Money `json:"amount"`
	Currency        string          `json:"currency"`
	MerchantName    *string         `json:"merchantName"`
	MCC             *string         `json:"mcc"`
	MerchantCountry *string         `json:"merchantCountry"`
	CreatedAt       string          `json:"createdAt"`
}

func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// handleNetworkAttempts answers GET /network/authorizations?cardNo=&limit=:
// the card number's attempts, approved and declined, newest first, at most
// limit (default 100, at most 500).
func handleNetworkAttempts(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNo, err := queryCardNo(c)
		if err != nil {
			writeError(c, err)
			return
		}
		limit := attemptsLimitDefault
		if s, ok := c.GetQuery("limit"); ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > network.AuthAttemptsMax {
				writeError(c, postings.FieldErrorf("limit", "must be a whole number from 1 to %d", network.AuthAttemptsMax))
				return
			}
			limit = n
		}
		attempts, err := l.AuthAttempts(c.Request.Context(), cardNo, limit)
		if err != nil {
			writeError(c, err)
			return
		}
		list := make([]attemptView, 0, len(attempts))
		for _, a := range attempts {
			list = append(list, attemptView{
				MessageID: a.MessageID, CardNo: a.CardNo, Approved: a.Approved, Code: a.Code, Reason: a.Reason,
				AuthID: stringOrNil(a.AuthID), Status: stringOrNil(a.Status),
				Amount: moneyOrNil(a.Amount, a.Currency), Currency: a.Currency,
				MerchantName: stringOrNil(a.MerchantName), MCC: stringOrNil(a.MCC),
				MerchantCountry: stringOrNil(a.MerchantCountry), CreatedAt: timestamp(a.CreatedAt),
			})
		}
		writeOK(c, gin.H{"list": list})
	}
}

// authorizationView is one authorization (a hold). amount is the
// transaction as the network sent it; cardAmount and fee what it was
// converted to and the cross-border fee held with it; held, captured and
// released what became of it, in the card's currency.
type authorizationView struct {
	AuthID          string         `json:"authId"`
	CardNo          string         `json:"cardNo"`
	MessageID       string         `json:"messageId"`
	Status          string         `json:"status"`
	Amount          postings.Money `json:"amount"`
	Currency        string         `json:"currency"`
	CardAmount      postings.Money `json:"cardAmount"`
	Fee             postings.Money `json:"fee"`
	CardCurrency    string         `json:"cardCurrency"`
	FXRate          *json.Number   `json:"fxRate"`
	Held            postings.Money `json:"held"`
	Captured        postings.Money `json:"captured"`
	Released        postings.Money `json:"released"`
	MerchantName    *string        `json:"merchantName"`
	MCC             *string        `json:"mcc"`
	MerchantCountry *string        `json:"merchantCountry"`
	ExpiresAt       string         `json:"expiresAt"`
	CreatedAt       string         `json:"createdAt"`
	UpdatedAt       string         `json:"updatedAt"`
}

// handleNetworkAuthorization answers GET /network/authorizations/{authId}.
func handleNetworkAuthorization(l Network) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, err := l.Authorization(c.Request.Context(), c.Param("authId"))
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, authorizationView{
			AuthID: a.AuthID, CardNo: a.CardNo, MessageID: a.MessageID, Status: a.Status,
			Amount: money(a.TxnAmount, a.TxnCurrency), Currency: a.TxnCurrency,
			CardAmount: money(a.Amount, a.Currency), Fee: money(a.Fee, a.Currency), CardCurrency: a.Currency,
			FXRate: rateOrNil(a.FXRate), Held: money(a.Held, a.Currency),
			Captured: money(a.Captured, a.Currency), Released: money(a.Released, a.Currency),
			MerchantName: stringOrNil(a.MerchantName), MCC: stringOrNil(a.MCC),
			MerchantCountry: stringOrNil(a.MerchantCountry),
			ExpiresAt:       timestamp(a.ExpiresAt), CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt),
		})
	}
}
