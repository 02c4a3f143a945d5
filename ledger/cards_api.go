package ledger

import (
	"context"
	"time"
)

// The card operations. Every one that changes something goes through the
// writer (one command, under the merchant's journal head lock) so that the
// card row, the journal entry, the balances and the outbox event commit
// together or not at all. Another merchant's card is ENOTFOUND with reason
// "card", exactly like an unknown one.

// Authenticate resolves a merchant from its shop number and public key,
// comparing the key's SHA-256 in constant time. An unknown shop and a wrong
// key are the same EUNAUTHENTICATED error. A disabled merchant is returned
// with the merchant (the caller decides: the API answers 403).
func (l *Ledger) Authenticate(ctx context.Context, shopNo, publicKey string) (*Merchant, error) {
	return l.authenticate(ctx, shopNo, publicKey)
}

// TouchAuthenticated records a successful authentication at time at. It
// writes at most once per second per merchant.
func (l *Ledger) TouchAuthenticated(ctx context.Context, merchant int64, at time.Time) error {
	return l.touchAuthenticated(ctx, merchant, at)
}

// Profile returns the merchant account profile.
func (l *Ledger) Profile(ctx context.Context, merchant int64) (*Profile, error) {
	return l.profile(ctx, merchant)
}

// MerchantBINs returns the BIN entries open to the merchant, ordered by
// network, BIN and currency.
func (l *Ledger) MerchantBINs(ctx context.Context, merchant int64) ([]BIN, error) {
	return l.merchantBINs(ctx, merchant)
}

// CreateCard issues a card on one of the merchant's BIN entries and funds it
// from the funding account of its currency (CARD_FUND). Errors: EFORBIDDEN
// reason "currency" or "bin", ELIMIT reason "card_balance_max" or
// "daily_card_issue", EINSUFFICIENT, ECONFLICT (idempotency).
func (l *Ledger) CreateCard(ctx context.Context, merchant int64, in CreateCardInput, idem *Idempotency) (*Card, error) {
	return l.createCard(ctx, merchant, in, idem)
}

// Card returns one of the merchant's cards; ENOTFOUND reason "card" if it is
// unknown or another merchant's.
func (l *Ledger) Card(ctx context.Context, merchant int64, cardNo string) (*Card, error) {
	return l.card(ctx, merchant, cardNo)
}

// CardsMax bounds Cards (the batch balance endpoint takes up to 100).
const CardsMax = 100

// Cards returns the merchant's cards among cardNos, by card number; unknown
// and foreign cards are absent from the map.
func (l *Ledger) Cards(ctx context.Context, merchant int64, cardNos []string) (map[string]*Card, error) {
	return l.cards(ctx, merchant, cardNos)
}

// FreezeCard moves an ACTIVE card to FROZEN; a FROZEN card stays FROZEN
// (idempotent on the target state). ESTATE reason "card_cancelled" for a
// cancelled card.
func (l *Ledger) FreezeCard(ctx context.Context, merchant int64, cardNo, reason string, idem *Idempotency) (*Card, error) {
	return l.setCardStatus(ctx, merchant, cardNo, CardFrozen, reason, idem)
}

// UnfreezeCard moves a FROZEN card to ACTIVE; an ACTIVE card stays ACTIVE.
func (l *Ledger) UnfreezeCard(ctx context.Context, merchant int64, cardNo string, idem *Idempotency) (*Card, error) {
	return l.setCardStatus(ctx, merchant, cardNo, CardActive, "", idem)
}

// CancelCard cancels a card for good and refunds its available balance to
// the funding account of its currency (CARD_CANCEL_REFUND). Open holds stay
// until they settle, are reversed or expire. ESTATE reason "card_cancelled"
// if it is cancelled already.
func (l *Ledger) CancelCard(ctx context.Context, merchant int64, cardNo string, idem *Idempotency) (*CancelResult, error) {
	return l.cancelCard(ctx, merchant, cardNo, idem)
}

// Transfer moves money between a card and a funding account (docs/cards.md).
// Errors: ENOTFOUND "card", ESTATE "card_frozen" (IN only) or
// "card_cancelled", EFORBIDDEN "currency", EFORBIDDEN "fx_pair" (no rate),
// ESTATE "fx_rate_stale", EINSUFFICIENT, ELIMIT "card_balance_max".
func (l *Ledger) Transfer(ctx context.Context, merchant int64, in TransferInput, idem *Idempotency) (*TransferResult, error) {
	return l.transfer(ctx, merchant, in, idem)
}
