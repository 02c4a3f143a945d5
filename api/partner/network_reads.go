package partner

import (
	"encoding/json"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

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
		cardNo, err := api.QueryCardNo(c)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		limit := attemptsLimitDefault
		if s, ok := c.GetQuery("limit"); ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > network.AuthAttemptsMax {
				api.WriteError(c, postings.FieldErrorf("limit", "must be a whole number from 1 to %d", network.AuthAttemptsMax))
				return
			}
			limit = n
		}
		attempts, err := l.AuthAttempts(c.Request.Context(), cardNo, limit)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		list := make([]attemptView, 0, len(attempts))
		for _, a := range attempts {
			list = append(list, attemptView{
				MessageID: a.MessageID, CardNo: a.CardNo, Approved: a.Approved, Code: a.Code, Reason: a.Reason,
				AuthID: stringOrNil(a.AuthID), Status: stringOrNil(a.Status),
				Amount: moneyOrNil(a.Amount, a.Currency), Currency: a.Currency,
				MerchantName: stringOrNil(a.MerchantName), MCC: stringOrNil(a.MCC),
				MerchantCountry: stringOrNil(a.MerchantCountry), CreatedAt: api.Timestamp(a.CreatedAt),
			})
		}
		api.WriteOK(c, gin.H{"list": list})
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
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, authorizationView{
			AuthID: a.AuthID, CardNo: a.CardNo, MessageID: a.MessageID, Status: a.Status,
			Amount: api.Money(a.TxnAmount, a.TxnCurrency), Currency: a.TxnCurrency,
			CardAmount: api.Money(a.Amount, a.Currency), Fee: api.Money(a.Fee, a.Currency), CardCurrency: a.Currency,
			FXRate: rateOrNil(a.FXRate), Held: api.Money(a.Held, a.Currency),
			Captured: api.Money(a.Captured, a.Currency), Released: api.Money(a.Released, a.Currency),
			MerchantName: stringOrNil(a.MerchantName), MCC: stringOrNil(a.MCC),
			MerchantCountry: stringOrNil(a.MerchantCountry),
			ExpiresAt:       api.Timestamp(a.ExpiresAt), CreatedAt: api.Timestamp(a.CreatedAt), UpdatedAt: api.Timestamp(a.UpdatedAt),
		})
	}
}
