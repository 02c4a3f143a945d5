// Package cards is the card domain: the BIN catalogue and who may issue on
// it, issuing, the card commands (freeze, unfreeze, cancel, transfers to
// and from the funding account, across currencies through the FX position
// accounts), the reads of cards, the merchants' limits by KYB tier with the
// daily card-load limit that every entry is checked against, and the
// account profile that shows them. Every command runs in the ledger's
// writer (ledger.Func), so that the card row, the journal entry, the
// balances and the outbox event commit together or not at all. Another
// merchant's card is ENOTFOUND "card", exactly like an unknown one.
package cards

import (
	"time"
)

// Card statuses. CANCELLED is terminal: the spec names only ACTIVE and FROZEN
// and leaves the name of the state after cancellation open (docs/cards.md).
const (
	CardActive    = "ACTIVE"
	CardFrozen    = "FROZEN"
	CardCancelled = "CANCELLED"
)

// Transfer directions of POST /shop/card/transfer.
const (
	DirectionIn  = "IN"  // funding account → card
	DirectionOut = "OUT" // card → funding account
)

// Card is a virtual card as merchants see it. Amounts are minor units of
// Currency. The PAN is never here: PanRef names the sealed PAN in the vault.
type Card struct {
	CardNo       string     `json:"cardNo"`
	MerchantID   int64      `json:"merchantId"`
	Bin          string     `json:"bin"`
	Network      string     `json:"network"`
	Currency     string     `json:"currency"`
	Last4        string     `json:"last4"`
	ExpiryMonth  int        `json:"expiryMonth"`
	ExpiryYear   int        `json:"expiryYear"`
	PanRef       string     `json:"panRef"`
	Status       string     `json:"status"`
	FreezeReason string     `json:"freezeReason,omitempty"`
	Remark       string     `json:"remark,omitempty"`
	CallbackURL  string     `json:"callbackUrl,omitempty"`
	Available    int64      `json:"available"`  // the spec's balance: what the card can spend
	Held         int64      `json:"held"`       // open authorization holds
	Receivable   int64      `json:"receivable"` // what it owes (≥ 0): captures beyond what it had, repaid first by its next credits
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
	CancelledAt  *time.Time `json:"cancelledAt,omitempty"`
}

// CreateCardInput is a validated card-create request. Amount is in minor
// units of Currency and may be zero (a card funded later by a transfer).
type CreateCardInput struct {
	Bin         string
	Currency    string
	Amount      int64
	Remark      string
	CallbackURL string
}

// TransferInput is a validated transfer request. Currency names the
// merchant's funding account on the other side of the card, and Amount is in
// that currency: debited from it for IN, credited to it for OUT. When it
// differs from the card's currency the card side is converted (docs/cards.md).
type TransferInput struct {
	CardNo    string
	Amount    int64
	Currency  string
	Direction string
}

// TransferResult is what a transfer did.
type TransferResult struct {
	TxID           string    `json:"txId"`
	CardNo         string    `json:"cardNo"`
	Direction      string    `json:"direction"`
	Amount         int64     `json:"amount"`   // minor units of Currency (the funding side)
	Currency       string    `json:"currency"` // the funding account's currency
	CardAmount     int64     `json:"cardAmount"`
	CardCurrency   string    `json:"cardCurrency"`
	FXRate         string    `json:"fxRate,omitempty"`  // executed: card units per funding unit, spread included
	MidRate        string    `json:"midRate,omitempty"` // the operator's rate it came from
	SpreadBps      int64     `json:"spreadBps,omitempty"`
	CardBalance    int64     `json:"cardBalance"`    // card available after the transfer
	FundingBalance int64     `json:"fundingBalance"` // funding account after the transfer
	CreatedAt      time.Time `json:"createdAt"`
}

// CancelResult is what a cancellation did.
type CancelResult struct {
	Card     Card  `json:"card"`
	Refunded int64 `json:"refunded"` // minor units moved back to the funding account
}

// Event types of the cards (docs/callbacks.md).
const (
	EventCardCreated   = "card.created"
	EventCardFrozen    = "card.frozen"
	EventCardUnfrozen  = "card.unfrozen"
	EventCardCancelled = "card.cancelled"
)
