package network

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Reads of the network side for the internal network API: one
// authorization (a hold) and the authorization attempts of a card. They read
// committed rows outside any batch; the holds only change under the
// merchant's lock (network.go).

// Authorization is an authorization as the network API shows it. TxnAmount
// is in minor units of TxnCurrency, the transaction's currency; the other
// amounts are in minor units of Currency, the card's.
type Authorization struct {
	AuthID          string    `json:"authId"`
	MerchantID      int64     `json:"merchantId"`
	CardNo          string    `json:"cardNo"`
	MessageID       string    `json:"messageId"`
	Status          string    `json:"status"` // OPEN, CLEARED, REVERSED or EXPIRED
	TxnAmount       int64     `json:"txnAmount"`
	TxnCurrency     string    `json:"txnCurrency"`
	FXRate          string    `json:"fxRate,omitempty"` // transaction → card currency, when they differ
	Amount          int64     `json:"amount"`           // converted, card currency
	Fee             int64     `json:"fee"`              // cross-border fee held with it
	Currency        string    `json:"currency"`
	Held            int64     `json:"held"`
	Captured        int64     `json:"captured"` // amount and fee captured
	Released        int64     `json:"released"`
	MerchantName    string    `json:"merchantName,omitempty"`
	MCC             string    `json:"mcc,omitempty"`
	MerchantCountry string    `json:"merchantCountry,omitempty"`
	ExpiresAt       time.Time `json:"expiresAt"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// Authorization returns one authorization by its id, or ENOTFOUND
// "authorization".
func (s *Service) Authorization(ctx context.Context, authID string) (*Authorization, error) {
	if !postings.IsRefText(authID) {
		return nil, errAuthNotFound()
	}
	var r authRow
	err := s.l.DB().NewSelect().Model(&r).Where("a.auth_id = ?", authID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errAuthNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return &Authorization{
		AuthID: r.AuthID, MerchantID: r.MerchantID, CardNo: r.CardNo, MessageID: r.MessageID, Status: r.Status,
		TxnAmount: r.TxnAmount, TxnCurrency: r.TxnCurrency, FXRate: r.FXRate.String,
		Amount: r.Amount, Fee: r.Fee, Currency: r.Currency, Held: r.Held, Captured: r.Captured, Released: r.Released,
		MerchantName: r.MerchantName.String, MCC: r.MCC.String, MerchantCountry: r.MerchantCountry.String,
		ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, nil
}

// AuthAttemptsMax bounds the attempts one AuthAttempts call returns.
const AuthAttemptsMax = 500

// AuthAttempt is one authorization request and its decision, approved or
// declined. Amount is in minor units of Currency, the transaction's.
// Status is the status of the hold an approval created (empty for a
// decline).
type AuthAttempt struct {
	MessageID       string    `json:"messageId"`
	CardNo          string    `json:"cardNo"`
	Amount          int64     `json:"amount"`
	Currency        string    `json:"currency"`
	Approved        bool      `json:"approved"`
	Code            string    `json:"code"`
	Reason          string    `json:"reason"`
	AuthID          string    `json:"authId,omitempty"`
	Status          string    `json:"status,omitempty"`
	MerchantName    string    `json:"merchantName,omitempty"`
	MCC             string    `json:"mcc,omitempty"`
	MerchantCountry string    `json:"merchantCountry,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
}

// AuthAttempts returns the authorization attempts of a card number, newest
// first, at most limit of them (1 to AuthAttemptsMax; out of range means
// AuthAttemptsMax). A card number nobody has returns its declines 14.
func (s *Service) AuthAttempts(ctx context.Context, cardNo string, limit int) ([]AuthAttempt, error) {
	if limit <= 0 || limit > AuthAttemptsMax {
		limit = AuthAttemptsMax
	}
	var rows []struct {
		authAttemptRow
		Status sql.NullString `bun:"status"`
	}
	err := s.l.DB().NewRaw(`
		select t.message_id, t.merchant_id, t.card_no, t.txn_amount, t.txn_currency, t.approved,
		       t.response_code, t.reason, t.auth_id, t.merchant_name, t.mcc, t.merchant_country,
		       t.created_at, a.status
		from auth_attempts t
		left join authorizations a on a.auth_id = t.auth_id
		where t.card_no = ?
		order by t.id desc
		limit ?`, cardNo, limit).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]AuthAttempt, 0, len(rows))
	for _, r := range rows {
		out = append(out, AuthAttempt{
			MessageID: r.MessageID, CardNo: r.CardNo, Amount: r.TxnAmount, Currency: r.TxnCurrency,
			Approved: r.Approved, Code: r.ResponseCode, Reason: r.Reason, AuthID: r.AuthID.String,
			Status: r.Status.String, MerchantName: r.MerchantName.String, MCC: r.MCC.String,
			MerchantCountry: r.MerchantCountry.String, CreatedAt: r.CreatedAt,
		})
	}
	return out, nil
}
