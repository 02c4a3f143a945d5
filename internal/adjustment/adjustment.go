// Package adjustment is corrections without edits (docs/finance.md,
// "Corrections"): an operator's correction is a new balanced ADJUSTMENT
// entry, never a change to the journal. It is proposed by one house user
// and approved, or rejected, by a different one (maker–checker); the
// approval posts the entry, once, through the ledger's transaction.
//
// Two modes:
//
//   - a reversal names an earlier entry of the merchant and posts its
//     exact opposite: every posting with its source and destination
//     swapped, the same amounts. Only entries that move the merchant's
//     funding account against the house accounts below (a DEPOSIT, a FEE,
//     a FEE_REFUND, a free adjustment) are reversed here: the entries of
//     cards, holds, remittances and conversions carry state of their
//     domains and are corrected by those domains' own commands.
//   - a free adjustment moves an amount between the merchant's funding
//     account and one house account (HouseAccounts): credit is house →
//     funding, debit is funding → house.
package adjustment

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
)

// ProposalTTL is how long a proposal waits for its checker: after it, the
// proposal is EXPIRED and can only be proposed again. A day covers a
// working day across time zones without leaving a forgotten proposal
// approvable for ever.
const ProposalTTL = 24 * time.Hour

// The statuses of a proposal. EXPIRED is derived: a PROPOSED row past its
// expires_at.
const (
	StatusProposed = "PROPOSED"
	StatusApproved = "APPROVED"
	StatusRejected = "REJECTED"
	StatusExpired  = "EXPIRED"
)

// The modes.
const (
	ModeReversal = "reversal"
	ModeFree     = "free"
)

// The directions of a free adjustment.
const (
	DirectionCredit = "credit" // house account → the merchant's funding
	DirectionDebit  = "debit"  // the merchant's funding → house account
)

// HouseAccounts are the house accounts a free adjustment may move against:
// world (the bank: money that did or did not arrive) and fee_revenue (a
// fee taken or given back by hand). The settlement and FX accounts are
// the network's, the rail's and the conversions' own.
var HouseAccounts = []postings.AccountType{postings.AccountWorld, postings.AccountFeeRevenue}

// reversible are the account types whose movements a reversal may undo.
var reversible = map[postings.AccountType]bool{postings.AccountFunding: true, postings.AccountWorld: true,
	postings.AccountFeeRevenue: true}

// Bounds of the texts.
const (
	reasonMin, reasonMax       = 3, 500
	referenceMin, referenceMax = 1, 64
)

// Actor is the house user who acts: a console user of the house (no
// merchant), from a console session or named by the CLI's --as. Two
// sessions of one user are one Actor: maker–checker compares UserID.
type Actor struct {
	UserID int64
	Login  string
}

// Proposal is an adjustment as proposed and decided.
type Proposal struct {
	ID          int64           `json:"id"`
	Merchant    int64           `json:"-"`
	Mode        string          `json:"mode"`
	ReversesSeq int64           `json:"reversesSeq,omitempty"`
	House       string          `json:"houseAccount,omitempty"`
	Direction   string          `json:"direction,omitempty"`
	Amount      *postings.Money `json:"amount,omitempty"`
	Reason      string          `json:"reason"`
	Reference   string          `json:"reference"`
	Status      string          `json:"status"`
	ProposedBy  string          `json:"proposedBy"`
	ProposedAt  time.Time       `json:"proposedAt"`
	ExpiresAt   time.Time       `json:"expiresAt"`
	DecidedBy   string          `json:"decidedBy,omitempty"`
	DecidedAt   *time.Time      `json:"decidedAt,omitempty"`
	EntrySeq    int64           `json:"entrySeq,omitempty"`

	proposerID int64 // the house user who proposed it: maker–checker compares ids
}

// checkText validates a reason or a reference: its length in bytes, UTF-8,
// no control characters (a line break or an escape would forge lines in
// the trail and the terminal).
func checkText(field, s string, minLen, maxLen int) error {
	switch {
	case len(s) < minLen || len(s) > maxLen:
		return postings.FieldErrorf(field, "must be %d to %d bytes", minLen, maxLen)
	case !utf8.ValidString(s):
		return postings.FieldErrorf(field, "must be UTF-8")
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return postings.FieldErrorf(field, "must not contain control characters (line breaks, tabs, escapes)")
	case strings.TrimSpace(s) != s:
		return postings.FieldErrorf(field, "must not start or end with spaces")
	}
	return nil
}

// txID is the ADJUSTMENT entry's txId, which the bill and its CSV show:
// the adjustment's id and, for a reversal, the entry it corrects.
func txID(p *Proposal) string {
	id := "adj-" + itoa(p.ID)
	if p.Mode == ModeReversal {
		id += ":reverses:" + itoa(p.ReversesSeq)
	}
	return id
}
