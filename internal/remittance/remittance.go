// Package remittance is the remittance domain (docs/remittances.md): a
// remittance is created with its debit (REMIT_OUT and its fee) in one
// command, then moves forward through SCREENING and IN_FLIGHT to SETTLED,
// RETURNED or REJECTED, each step exactly once under the merchant's lock
// with the entries that move its money and a remittance.status event. The
// lifecycle worker takes the steps the gateway decides (screening against
// the sanctions list, asking the rail); a rail partner reports the others.
// The rules a request is validated against are package rules.
package remittance

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// Remittance statuses. REJECTED is the gateway's own terminal state for a
// remittance stopped by screening; the spec's lifecycle ends in SETTLED or
// RETURNED (docs/remittances.md).
const (
	RemitSubmitted = "SUBMITTED"
	RemitScreening = "SCREENING"
	RemitInFlight  = "IN_FLIGHT"
	RemitSettled   = "SETTLED"
	RemitReturned  = "RETURNED"
	RemitRejected  = "REJECTED"
)

// EventRemittanceStatus is the outbox event of every status change.
const EventRemittanceStatus = "remittance.status"

// nextStatus is the forward-only lifecycle: the states each may move to.
var nextStatus = map[string][]string{
	RemitSubmitted: {RemitScreening},
	RemitScreening: {RemitInFlight, RemitRejected},
	RemitInFlight:  {RemitSettled, RemitReturned},
}

// RemittanceInput is a validated remittance request: the API validates the
// beneficiary and purpose against the corridor (rules.ValidateRemittance)
// and computes the fee and the rail before calling CreateRemittance.
type RemittanceInput struct {
	PayerID     string
	Beneficiary json.RawMessage // {name, country, bank_swift, account_no, …}
	Amount      int64           // minor units of Currency
	Fee         int64
	// FeeFact is the rule that made Fee (rules.RemittanceFeeFact), hashed
	// with the FEE entry so that audit verify can re-derive it; nil
	// records only the rule's name, as before.
	FeeFact     *postings.FeeFact `json:",omitempty"`
	Currency    string
	Purpose     string
	Rail        string
	CallbackURL string
}

// RemittanceStep is one entry of a remittance's history.
type RemittanceStep struct {
	Status string    `json:"status"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// Remittance is a remittance with its history.
type Remittance struct {
	TxID        string           `json:"txId"`
	MerchantID  int64            `json:"merchantId"`
	PayerID     string           `json:"payerId"`
	Beneficiary json.RawMessage  `json:"beneficiary"`
	Amount      int64            `json:"amount"`
	Fee         int64            `json:"fee"`
	Currency    string           `json:"currency"`
	Purpose     string           `json:"purpose,omitempty"`
	Rail        string           `json:"rail"`
	Status      string           `json:"status"`
	Reason      string           `json:"reason,omitempty"`
	CallbackURL string           `json:"callbackUrl,omitempty"`
	CreatedAt   time.Time        `json:"createdAt"`
	UpdatedAt   time.Time        `json:"updatedAt"`
	SettledAt   *time.Time       `json:"settledAt,omitempty"`
	History     []RemittanceStep `json:"history"`
}

type remitRow struct {
	bun.BaseModel `bun:"table:remittances,alias:r"`
	TxID          string          `bun:"tx_id,pk"`
	MerchantID    int64           `bun:"merchant_id"`
	PayerID       string          `bun:"payer_id"`
	Beneficiary   json.RawMessage `bun:"beneficiary,type:jsonb"`
	Amount        int64           `bun:"amount"`
	Fee           int64           `bun:"fee"`
	Currency      string          `bun:"currency"`
	Purpose       sql.NullString  `bun:"purpose"`
	Rail          string          `bun:"rail"`
	Status        string          `bun:"status"`
	CallbackURL   sql.NullString  `bun:"callback_url"`
	Reason        sql.NullString  `bun:"reason"`
	NextActionAt  bun.NullTime    `bun:"next_action_at"`
	ClaimedUntil  bun.NullTime    `bun:"claimed_until"`
	CreatedAt     time.Time       `bun:"created_at"`
	UpdatedAt     time.Time       `bun:"updated_at"`
	SettledAt     bun.NullTime    `bun:"settled_at"`
}

type remitHistoryRow struct {
	bun.BaseModel `bun:"table:remittance_history"`
	TxID          string         `bun:"tx_id,pk"`
	Seq           int            `bun:"seq,pk"`
	Status        string         `bun:"status"`
	Reason        sql.NullString `bun:"reason"`
	At            time.Time      `bun:"at"`
}
