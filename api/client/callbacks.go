package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
)

// Callbacks: the gateway's signed events (docs/callbacks.md), verified by
// the reference receiver (api/receiver), offered here so that one import
// gives a merchant both directions.

// CallbackEvent is the body of a callback; Data is the event's object, to
// decode with the Decode… function of its EventType.
type CallbackEvent = receiver.Event

// CallbackOptions tune CallbackHandler (tolerance, body bound, de-duplication).
type CallbackOptions = receiver.Options

// The callback headers.
const (
	HeaderSign      = receiver.HeaderSign
	HeaderTimestamp = receiver.HeaderTimestamp
	// HeaderSignatures carries one signature per signing key in force.
	HeaderSignatures = receiver.HeaderSignatures
)

// CallbackHandler is the reference receiver (receiver.Handler): it verifies
// the signature over the raw body, refuses stale timestamps, de-duplicates
// on event_id, calls onEvent and acknowledges.
func CallbackHandler(privateKey string, opts CallbackOptions, onEvent func(ctx context.Context, e CallbackEvent) error) http.Handler {
	return receiver.Handler(privateKey, opts, onEvent)
}

// CallbackHandlerKeys is the reference receiver with several keys
// (receiver.HandlerKeys): during a roll of the signing key give it the old
// and the new key, so that no genuine callback is refused.
func CallbackHandlerKeys(keys []string, opts CallbackOptions, onEvent func(ctx context.Context, e CallbackEvent) error) http.Handler {
	return receiver.HandlerKeys(keys, opts, onEvent)
}

// VerifyCallback checks X-Sign over the raw body and X-Timestamp against
// now (receiver.Verify; tolerance ≤ 0 means 5 minutes).
func VerifyCallback(body []byte, timestamp, sign, privateKey string, now time.Time, tolerance time.Duration) error {
	return receiver.Verify(body, timestamp, sign, privateKey, now, tolerance)
}

// The event types.
const (
	EventCardCreated           = "card.created"
	EventCardFrozen            = "card.frozen"
	EventCardUnfrozen          = "card.unfrozen"
	EventCardCancelled         = "card.cancelled"
	EventCardRefunded          = "card.refunded"
	EventRemittanceStatus      = "remittance.status"
	EventAuthorizationApproved = "authorization.approved"
	EventAuthorizationDeclined = "authorization.declined"
	EventAuthorizationCleared  = "authorization.cleared"
	EventAuthorizationReversed = "authorization.reversed"
	EventAuthorizationExpired  = "authorization.expired"
)

// CardEventData is the data of card.created, card.frozen, card.unfrozen and
// card.cancelled: the card after the change.
type CardEventData struct {
	CardNo    string    `json:"cardNo"`
	Last4     string    `json:"last4"`
	Status    string    `json:"status"`
	Currency  string    `json:"currency"`
	Balance   Decimal   `json:"balance"`
	Held      Decimal   `json:"held"`
	CreatedAt time.Time `json:"createdAt"`
}

// RemittanceEventData is the data of remittance.status.
type RemittanceEventData struct {
	TxID           string     `json:"txId"`
	Status         string     `json:"status"`
	PreviousStatus string     `json:"previousStatus"`
	Amount         Decimal    `json:"amount"`
	Currency       string     `json:"currency"`
	Fee            Decimal    `json:"fee"`
	Rail           string     `json:"rail"`
	Reason         string     `json:"reason,omitempty"`
	SettledAt      *time.Time `json:"settledAt,omitempty"`
}

// AuthorizationEventData is the data of authorization.approved and
// authorization.declined.
type AuthorizationEventData struct {
	AuthID       string    `json:"authId,omitempty"`
	Approved     bool      `json:"approved"`
	Code         string    `json:"code"`
	Reason       string    `json:"reason"`
	CardNo       string    `json:"cardNo"`
	Amount       Decimal   `json:"amount"`
	Currency     string    `json:"currency"`
	CardAmount   *Decimal  `json:"cardAmount,omitempty"`
	Fee          *Decimal  `json:"fee,omitempty"`
	CardCurrency string    `json:"cardCurrency,omitempty"`
	FXRate       *Decimal  `json:"fxRate,omitempty"`
	Available    *Decimal  `json:"available,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

// HoldEventData is the data of authorization.cleared, .reversed and
// .expired.
type HoldEventData struct {
	AuthID     string    `json:"authId"`
	CardNo     string    `json:"cardNo"`
	Status     string    `json:"status"`
	Currency   string    `json:"currency"`
	Captured   Decimal   `json:"captured"`
	Fee        Decimal   `json:"fee"`
	Released   Decimal   `json:"released"`
	Receivable Decimal   `json:"receivable"`
	Held       Decimal   `json:"held"`
	Available  Decimal   `json:"available"`
	CreatedAt  time.Time `json:"createdAt"`
}

// RefundEventData is the data of card.refunded.
type RefundEventData struct {
	// MessageID is the network's id of the refund: the bill line's txId
	// and what the refund reconciliation matches (client 1.2.0; absent
	// from events sent before it).
	MessageID string    `json:"messageId,omitempty"`
	CardNo    string    `json:"cardNo"`
	Amount    Decimal   `json:"amount"`
	Currency  string    `json:"currency"`
	Credited  string    `json:"credited"` // card, funding
	Available Decimal   `json:"available"`
	CreatedAt time.Time `json:"createdAt"`
}

// DecodeEventData decodes e.Data into the type of e.EventType:
// *CardEventData, *RemittanceEventData, *AuthorizationEventData,
// *HoldEventData or *RefundEventData. An unknown type is (nil, nil):
// acknowledge it, as docs/callbacks.md asks.
func DecodeEventData(e CallbackEvent) (any, error) {
	var out any
	switch e.EventType {
	case EventCardCreated, EventCardFrozen, EventCardUnfrozen, EventCardCancelled:
		out = &CardEventData{}
	case EventRemittanceStatus:
		out = &RemittanceEventData{}
	case EventAuthorizationApproved, EventAuthorizationDeclined:
		out = &AuthorizationEventData{}
	case EventAuthorizationCleared, EventAuthorizationReversed, EventAuthorizationExpired:
		out = &HoldEventData{}
	case EventCardRefunded:
		out = &RefundEventData{}
	default:
		return nil, nil
	}
	if err := json.Unmarshal(e.Data, out); err != nil {
		return nil, fmt.Errorf("client: %s event %s: %w", e.EventType, e.EventID, err)
	}
	return out, nil
}
