package client

import (
	"context"
	"net/http"
	"time"
)

// The sandbox (docs/api.md, "The sandbox"): a test merchant plays the card
// network and the rail partner on its own cards and remittances. Each call
// is the internal API's message without its messageId: the Idempotency-Key
// every POST of this client carries makes the message, so a retry is the
// same message. To a live merchant every sandbox path is an unknown path:
// the call fails with an *Error of HTTP status 404.

var (
	opSandboxAuthorize = operation{"sandboxAuthorize", http.MethodPost, "/shop/sandbox/authorize"}
	opSandboxCapture   = operation{"sandboxCapture", http.MethodPost, "/shop/sandbox/capture"}
	opSandboxReverse   = operation{"sandboxReverse", http.MethodPost, "/shop/sandbox/reverse"}
	opSandboxRefund    = operation{"sandboxRefund", http.MethodPost, "/shop/sandbox/refund"}
	opSandboxSettle    = operation{"sandboxSettleRemittance", http.MethodPost, "/shop/sandbox/remittance/settle"}
	opSandboxReturn    = operation{"sandboxReturnRemittance", http.MethodPost, "/shop/sandbox/remittance/return"}
	sandboxOperations  = []operation{opSandboxAuthorize, opSandboxCapture, opSandboxReverse, opSandboxRefund,
		opSandboxSettle, opSandboxReturn, opSandboxClock, opSandboxAdvanceClock}
)

// SandboxAuthorizeRequest is an authorization on one of the merchant's
// cards: Amount in Currency, the transaction's.
type SandboxAuthorizeRequest struct {
	CardNo          string  `json:"cardNo"`
	Amount          Decimal `json:"amount"`
	Currency        string  `json:"currency"`
	MerchantName    string  `json:"merchantName,omitempty"`
	MCC             string  `json:"mcc,omitempty"`
	MerchantCountry string  `json:"merchantCountry,omitempty"`
}

// SandboxAuthorization is the decision: approved, or declined with its
// ISO 8583 Code (a decline is an answer, not an error). AuthID is nil on
// a decline.
type SandboxAuthorization struct {
	AuthID       *string   `json:"authId"`
	Approved     bool      `json:"approved"`
	Code         string    `json:"code"`
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

// SandboxCaptureRequest captures (clears) an authorization: Amount in its
// transaction currency, below, equal to or above the hold.
type SandboxCaptureRequest struct {
	AuthID string  `json:"authId"`
	Amount Decimal `json:"amount"`
}

// SandboxReverseRequest releases an authorization: all of it with Amount
// nil, else that part.
type SandboxReverseRequest struct {
	AuthID string   `json:"authId"`
	Amount *Decimal `json:"amount,omitempty"`
}

// SandboxHold is what a capture or a reversal did to the hold, in the
// card's currency.
type SandboxHold struct {
	AuthID     string    `json:"authId"`
	CardNo     string    `json:"cardNo"`
	Status     string    `json:"status"` // OPEN, CLEARED, REVERSED, EXPIRED
	Currency   string    `json:"currency"`
	Captured   Decimal   `json:"captured"`
	Fee        Decimal   `json:"fee"`
	Released   Decimal   `json:"released"`
	Receivable Decimal   `json:"receivable"`
	Held       Decimal   `json:"held"`
	Available  Decimal   `json:"available"`
	CreatedAt  time.Time `json:"createdAt"`
}

// SandboxRefundRequest is a network refund to one of the merchant's cards,
// in the card's currency.
type SandboxRefundRequest struct {
	CardNo   string  `json:"cardNo"`
	Amount   Decimal `json:"amount"`
	Currency string  `json:"currency"`
}

// SandboxRefund is what a refund did: Credited "card", or "funding" for a
// cancelled card.
type SandboxRefund struct {
	// MessageID is the refund's network message id, the bill line's txId
	// (client 1.2.0).
	MessageID string    `json:"messageId,omitempty"`
	CardNo    string    `json:"cardNo"`
	Amount    Decimal   `json:"amount"`
	Currency  string    `json:"currency"`
	Credited  string    `json:"credited"`
	Available Decimal   `json:"available"`
	CreatedAt time.Time `json:"createdAt"`
}

// SandboxSettleRequest settles an IN_FLIGHT remittance of the merchant's.
type SandboxSettleRequest struct {
	TxID string `json:"txId"`
}

// SandboxReturnRequest returns an IN_FLIGHT remittance with an ISO 20022
// reason (AC01, AC04, MS03, …).
type SandboxReturnRequest struct {
	TxID   string `json:"txId"`
	Reason string `json:"reason"`
}

// SandboxRemittanceReport is the remittance after the rail's report.
type SandboxRemittanceReport struct {
	TxID      string     `json:"txId"`
	Status    string     `json:"status"` // SETTLED or RETURNED
	Reason    *string    `json:"reason"`
	Amount    Decimal    `json:"amount"`
	Fee       Decimal    `json:"fee"`
	Currency  string     `json:"currency"`
	Rail      string     `json:"rail"`
	SettledAt *time.Time `json:"settledAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
}

// SandboxAuthorize is POST /shop/sandbox/authorize.
func (c *Client) SandboxAuthorize(ctx context.Context, req SandboxAuthorizeRequest, opts ...CallOption) (*SandboxAuthorization, error) {
	var out SandboxAuthorization
	if err := c.call(ctx, opSandboxAuthorize, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SandboxCapture is POST /shop/sandbox/capture.
func (c *Client) SandboxCapture(ctx context.Context, req SandboxCaptureRequest, opts ...CallOption) (*SandboxHold, error) {
	var out SandboxHold
	if err := c.call(ctx, opSandboxCapture, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SandboxReverse is POST /shop/sandbox/reverse.
func (c *Client) SandboxReverse(ctx context.Context, req SandboxReverseRequest, opts ...CallOption) (*SandboxHold, error) {
	var out SandboxHold
	if err := c.call(ctx, opSandboxReverse, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SandboxRefund is POST /shop/sandbox/refund.
func (c *Client) SandboxRefund(ctx context.Context, req SandboxRefundRequest, opts ...CallOption) (*SandboxRefund, error) {
	var out SandboxRefund
	if err := c.call(ctx, opSandboxRefund, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SandboxSettleRemittance is POST /shop/sandbox/remittance/settle.
func (c *Client) SandboxSettleRemittance(ctx context.Context, req SandboxSettleRequest, opts ...CallOption) (*SandboxRemittanceReport, error) {
	var out SandboxRemittanceReport
	if err := c.call(ctx, opSandboxSettle, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SandboxReturnRemittance is POST /shop/sandbox/remittance/return.
func (c *Client) SandboxReturnRemittance(ctx context.Context, req SandboxReturnRequest, opts ...CallOption) (*SandboxRemittanceReport, error) {
	var out SandboxRemittanceReport
	if err := c.call(ctx, opSandboxReturn, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
