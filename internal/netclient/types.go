package netclient

import (
	"time"

	"github.com/paygate/gateway/api/client"
)

// Decimal is the exact decimal of every amount and rate.
type Decimal = client.Decimal

// AuthorizeRequest is an authorization request: Amount in Currency (the
// transaction's, which may differ from the card's).
type AuthorizeRequest struct {
	MessageID       string  `json:"messageId"`
	CardNo          string  `json:"cardNo"`
	Amount          Decimal `json:"amount"`
	Currency        string  `json:"currency"`
	MerchantName    string  `json:"merchantName,omitempty"`
	MCC             string  `json:"mcc,omitempty"`
	MerchantCountry string  `json:"merchantCountry,omitempty"`
}

// Decision is the answer to an authorization. The pointers are null when
// they do not apply (a decline before the conversion, an unknown card).
type Decision struct {
	AuthID       *string   `json:"authId"`
	Approved     bool      `json:"approved"`
	Code         string    `json:"code"` // ISO 8583: 00 approved, 05, 13, 14, 46, 51, 54, 57, 61
	Reason       string    `json:"reason"`
	CardNo       string    `json:"cardNo"`
	Amount       Decimal   `json:"amount"`
	Currency     string    `json:"currency"`
	CardAmount   *Decimal  `json:"cardAmount"`
	Fee          *Decimal  `json:"fee"`
	CardCurrency *string   `json:"cardCurrency"`
	FXRate       *Decimal  `json:"fxRate"`
	Available    *Decimal  `json:"available"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ClearRequest captures an authorization: Amount in its transaction
// currency.
type ClearRequest struct {
	MessageID string  `json:"messageId"`
	AuthID    string  `json:"authId"`
	Amount    Decimal `json:"amount"`
}

// ReverseRequest releases a hold: Amount nil for all of it.
type ReverseRequest struct {
	MessageID string   `json:"messageId"`
	AuthID    string   `json:"authId"`
	Amount    *Decimal `json:"amount,omitempty"`
}

// HoldResult is what a clearing or reversal did, in the card's Currency:
// the object the authorization.cleared and .reversed callbacks carry.
type HoldResult = client.HoldEventData

// RefundRequest credits a card, in its own currency.
type RefundRequest struct {
	MessageID string  `json:"messageId"`
	CardNo    string  `json:"cardNo"`
	Amount    Decimal `json:"amount"`
	Currency  string  `json:"currency"`
}

// Refund is what a refund credited: the object of the card.refunded
// callback.
type Refund = client.RefundEventData

// AuthorizationAttempt is one authorization request for a card.
type AuthorizationAttempt struct {
	MessageID       string    `json:"messageId"`
	CardNo          string    `json:"cardNo"`
	Approved        bool      `json:"approved"`
	Code            string    `json:"code"`
	Reason          string    `json:"reason"`
	AuthID          *string   `json:"authId"`
	Status          *string   `json:"status"`
	Amount          *Decimal  `json:"amount"`
	Currency        string    `json:"currency"`
	MerchantName    *string   `json:"merchantName"`
	MCC             *string   `json:"mcc"`
	MerchantCountry *string   `json:"merchantCountry"`
	CreatedAt       time.Time `json:"createdAt"`
}

// Authorization is one authorization and what became of its hold.
type Authorization struct {
	AuthID          string    `json:"authId"`
	CardNo          string    `json:"cardNo"`
	MessageID       string    `json:"messageId"`
	Status          string    `json:"status"`
	Amount          Decimal   `json:"amount"`
	Currency        string    `json:"currency"`
	CardAmount      Decimal   `json:"cardAmount"`
	Fee             Decimal   `json:"fee"`
	CardCurrency    string    `json:"cardCurrency"`
	FXRate          *Decimal  `json:"fxRate"`
	Held            Decimal   `json:"held"`
	Captured        Decimal   `json:"captured"`
	Released        Decimal   `json:"released"`
	MerchantName    *string   `json:"merchantName"`
	MCC             *string   `json:"mcc"`
	MerchantCountry *string   `json:"merchantCountry"`
	ExpiresAt       time.Time `json:"expiresAt"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// RailReportRequest reports a remittance SETTLED, or RETURNED with its ISO
// 20022 Reason.
type RailReportRequest struct {
	MessageID string `json:"messageId"`
	TxID      string `json:"txId"`
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"`
}

// RailReport is the remittance after a report.
type RailReport struct {
	TxID      string     `json:"txId"`
	Status    string     `json:"status"`
	Reason    *string    `json:"reason"`
	Amount    Decimal    `json:"amount"`
	Fee       Decimal    `json:"fee"`
	Currency  string     `json:"currency"`
	Rail      string     `json:"rail"`
	SettledAt *time.Time `json:"settledAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
}
