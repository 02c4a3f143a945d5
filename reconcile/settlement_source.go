package reconcile

import (
	"context"
	"time"
)

// SettlementSource is what settlement reconciliation needs: the clearings
// the network side booked. The types are this package's own, so that its
// exported API names nothing internal to the module; the gateway adapts
// its network domain to it in internal/app/services (Services.Settlements).
type SettlementSource interface {
	// SettlementsByAuth returns, for each authorization id, its CARD_SETTLE
	// entry if it has one and its status.
	SettlementsByAuth(ctx context.Context, authIDs []string) ([]LedgerSettlement, error)
	// SettlementsBetween pages through the CARD_SETTLE entries created in
	// [from, to), in (CreatedAt, EntryID) order after the cursor, at most
	// limit of them; fewer than limit means the last page.
	SettlementsBetween(ctx context.Context, from, to time.Time, after SettlementCursor, limit int) ([]LedgerSettlement, error)
}

// LedgerSettlement is the ledger's side of a settlement row: a card network
// clearing as the journal has it, the CARD_SETTLE entry of an
// authorization, with the network's own amount and message id recorded on
// it.
type LedgerSettlement struct {
	AuthID     string
	AuthStatus string // the authorization's status (AuthOpen, …); "" when there is no such authorization
	// Test: the authorization is a test merchant's (its sandbox's, never
	// the network's); ShopNo is then set, Found or not.
	Test        bool
	Found       bool  // a CARD_SETTLE entry exists; the fields below are set only then
	EntryID     int64 // the entry's id: the cursor of SettlementsBetween
	Merchant    int64
	ShopNo      string
	Seq         int64
	CardNo      string
	CreatedAt   time.Time
	MessageID   string // the network's message id
	TxnAmount   string // the network's amount: minor units of TxnCurrency, as text
	TxnCurrency string
	Captured    int64 // what the entry captured, in Currency (the card's)
	Currency    string
}

// SettlementCursor is where a page of SettlementsBetween starts: after the
// entry created at CreatedAt with EntryID.
type SettlementCursor struct {
	CreatedAt time.Time
	EntryID   int64
}

// The authorization statuses a LedgerSettlement reports.
const (
	AuthOpen     = "OPEN"
	AuthCleared  = "CLEARED"
	AuthReversed = "REVERSED"
	AuthExpired  = "EXPIRED"
)

// SettlementBatch is how many authorizations or entries reconciliation
// asks a SettlementSource for at once; a source must answer that many.
const SettlementBatch = 1000
