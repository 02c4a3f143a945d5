package ledger

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

// BIN is one entry of the BIN catalogue.
type BIN struct {
	Bin      string `json:"bin"`
	Currency string `json:"currency"`
	Network  string `json:"network"` // VISA or MASTERCARD
	Type     string `json:"type"`    // VIRTUAL
	Enabled  bool   `json:"enabled"`
}

// Limit is a merchant's limits in one currency, minor units.
type Limit struct {
	Currency          string `json:"currency"`
	CardBalanceMax    int64  `json:"cardBalanceMax"`    // the largest available balance of one card
	DailyCardIssueMax int64  `json:"dailyCardIssueMax"` // card funding per UTC day
	DailyCardIssued   int64  `json:"dailyCardIssued"`   // used so far today
	RemittanceMax     int64  `json:"remittanceMax"`     // the largest single remittance
}

// FundingBalance is a funding account's balance.
type FundingBalance struct {
	Currency string `json:"currency"`
	Balance  int64  `json:"balance"`
}

// Receivable is what a merchant's cards owe in one currency, zero or more
// (the sum of their receivables, see Card.Receivable).
type Receivable struct {
	Currency string `json:"currency"`
	Amount   int64  `json:"amount"`
}

// Profile is the merchant account profile of GET /shop/account.
type Profile struct {
	Merchant            Merchant         `json:"merchant"`
	KYBTier             string           `json:"kybTier"`
	Balances            []FundingBalance `json:"balances"`
	Receivables         []Receivable     `json:"receivables"` // one per currency of Balances, then any other
	Limits              []Limit          `json:"limits"`
	LastAuthenticatedAt *time.Time       `json:"lastAuthenticatedAt,omitempty"`
}

// FXRate is an operator rate: one unit of Base is MidRate units of Quote.
type FXRate struct {
	Base      string    `json:"base"`
	Quote     string    `json:"quote"`
	MidRate   string    `json:"midRate"`
	SpreadBps int64     `json:"spreadBps"`
	Source    string    `json:"source"` // "seed" or "operator"
	UpdatedAt time.Time `json:"updatedAt"`
}

// KYB tiers with their default limits (docs/cards.md), in USD minor units;
// other currencies take the same figure converted at the current rate.
const (
	KYBTier1 = "TIER_1"
	KYBTier2 = "TIER_2"
	KYBTier3 = "TIER_3"
)

// Event types of the cards (docs/callbacks.md).
const (
	EventCardCreated   = "card.created"
	EventCardFrozen    = "card.frozen"
	EventCardUnfrozen  = "card.unfrozen"
	EventCardCancelled = "card.cancelled"
)
