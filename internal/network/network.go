// Package network is the card network side of the gateway
// (docs/network.md): authorizations put money on hold, clearing captures
// it, reversals and expiry release it, refunds credit it back, within the
// bounds the operator sets on the processor's messages. Each network
// message is idempotent on its message id (an idempotency key of scope
// "network"): a repeat has no second effect and gets the first answer. A
// hold is resolved at most once in total: its row tracks what is still
// held, and every change to it happens under the merchant's head lock
// together with the journal entries that move the money. The package also
// reads the clearings and the refunds back for settlement-file and
// refund-file reconciliation.
package network

import (
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Domain is the network as the journal core runs it (ledger.Domain):
// listed by the app after the cards its authorizations reference
// (internal/domains). A network message id is kept as an idempotency key
// for the TTL, and in the attempts log for ever: one reused after the TTL
// is refused.
var Domain = ledger.Domain{
	Name:   "network",
	States: []ledger.StateKind{batchOf},
	Tables: []string{"authorizations", "auth_attempts", "network_refunds"},
	// A refund's message id is kept for ever too (network_refunds), so a
	// refund replayed after the TTL is refused, not booked twice.
	Constraints: map[string]*postings.Error{"auth_attempts_message_id_key": errMessageIDReused, "network_refunds_pkey": errMessageIDReused},
}

var errMessageIDReused = &postings.Error{Code: postings.ECONFLICT, Reason: postings.ReasonMessageID,
	Message: "this network message id was used before and its answer is no longer kept; send a new message id"}

// ISO 8583 response codes of an authorization decision.
const (
	RespApproved     = "00"
	RespDoNotHonour  = "05"
	RespUnknownCard  = "14"
	RespCancelled    = "46"
	RespInsufficient = "51"
	RespExpired      = "54"
	RespNotPermitted = "57" // the spec's code for a frozen card
	RespOverLimit    = "61"
)

// Authorization statuses.
const (
	AuthOpen     = "OPEN"
	AuthCleared  = "CLEARED"
	AuthReversed = "REVERSED"
	AuthExpired  = "EXPIRED"
)

// Event types of the network side.
const (
	EventAuthApproved = "authorization.approved"
	EventAuthDeclined = "authorization.declined"
	EventAuthCleared  = "authorization.cleared"
	EventAuthReversed = "authorization.reversed"
	EventAuthExpired  = "authorization.expired"
	EventCardRefund   = "card.refunded"
)

// AuthRequest is an authorization request from the network. Amount is in
// minor units of Currency, the transaction's currency.
type AuthRequest struct {
	MessageID       string `json:"messageId"`
	CardNo          string `json:"cardNo"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	MerchantName    string `json:"merchantName"`
	MCC             string `json:"mcc"`
	MerchantCountry string `json:"merchantCountry"`
}

// AuthResult is the decision.
type AuthResult struct {
	AuthID       string    `json:"authId,omitempty"`
	Approved     bool      `json:"approved"`
	Code         string    `json:"code"`
	Reason       string    `json:"reason"`
	CardNo       string    `json:"cardNo"`
	Amount       int64     `json:"amount"`
	Currency     string    `json:"currency"`
	CardAmount   int64     `json:"cardAmount,omitempty"` // converted, card currency
	Fee          int64     `json:"fee,omitempty"`
	CardCurrency string    `json:"cardCurrency,omitempty"`
	FXRate       string    `json:"fxRate,omitempty"`
	Available    int64     `json:"available"` // after the decision
	CreatedAt    time.Time `json:"createdAt"`
}

// ClearRequest captures an authorization. Amount is in the authorization's
// transaction currency; it may be below, equal to or above the hold.
type ClearRequest struct {
	MessageID string `json:"messageId"`
	AuthID    string `json:"authId"`
	Amount    int64  `json:"amount"`
}

// ReverseRequest releases all (Amount 0) or part of a hold. Amount is in the
// authorization's transaction currency.
type ReverseRequest struct {
	MessageID string `json:"messageId"`
	AuthID    string `json:"authId"`
	Amount    int64  `json:"amount,omitempty"`
}

// RefundRequest credits a card (or, for a cancelled card, the funding
// account). Amount is in minor units of Currency, which must be the card's.
type RefundRequest struct {
	MessageID string `json:"messageId"`
	CardNo    string `json:"cardNo"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

// HoldResult is what a clearing, reversal or expiry did to a hold. Amounts
// are minor units of the card's currency.
type HoldResult struct {
	AuthID     string    `json:"authId"`
	CardNo     string    `json:"cardNo"`
	Status     string    `json:"status"`
	Currency   string    `json:"currency"`
	Captured   int64     `json:"captured"`   // paid to the network
	Fee        int64     `json:"fee"`        // booked as FEE
	Released   int64     `json:"released"`   // given back by this message
	Receivable int64     `json:"receivable"` // a capture the card could not cover, carried on its receivable
	Held       int64     `json:"held"`       // still on hold
	Available  int64     `json:"available"`  // the card's available balance after
	CreatedAt  time.Time `json:"createdAt"`
}

// RefundResult is what a refund did.
type RefundResult struct {
	// MessageID is the network's id of the refund, the entry's txId and
	// what a refund file names (omitted in an answer stored before it).
	MessageID string    `json:"messageId,omitempty"`
	CardNo    string    `json:"cardNo"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Credited  string    `json:"credited"` // "card" or "funding" (cancelled card)
	Available int64     `json:"available"`
	CreatedAt time.Time `json:"createdAt"`
}
