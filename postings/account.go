package postings

import (
	"strconv"
)

// AccountType is a line of the chart of accounts (docs/ledger.md). Every
// account belongs to exactly one merchant, including the system accounts
// (world, settlement, fees, FX): sharding them per merchant means that two
// merchants' writes never lock a common row.
type AccountType string

// The chart of accounts. A balance is Σ incoming − Σ outgoing, so money that
// entered the ledger from outside leaves the world account negative, and the
// balances of one currency always sum to zero.
const (
	// AccountFunding is the merchant's prepaid balance in one currency, from
	// which cards are funded and remittances paid. Never below zero.
	AccountFunding AccountType = "funding"
	// AccountCardAvailable is what a card can spend (the spec's balance).
	// Never below zero.
	AccountCardAvailable AccountType = "card_available"
	// AccountCardHeld holds the amounts of open authorizations. Never below
	// zero; always the sum of the card's open holds.
	AccountCardHeld AccountType = "card_held"
	// AccountCardReceivable carries what a card owes when the network
	// captures more than the card had (a capture cannot be refused). It is
	// zero or negative; later credits to the card repay it first.
	AccountCardReceivable AccountType = "card_receivable"
	// AccountRemitInFlight holds remittances between debit and settlement or
	// return. Never below zero.
	AccountRemitInFlight AccountType = "remit_in_flight"
	// AccountNetworkSettlement collects captured card spend owed to the card
	// network.
	AccountNetworkSettlement AccountType = "network_settlement"
	// AccountRailSettlement collects settled remittances paid out through a
	// rail partner.
	AccountRailSettlement AccountType = "rail_settlement"
	// AccountFeeRevenue collects the gateway's fees.
	AccountFeeRevenue AccountType = "fee_revenue"
	// AccountFXPosition is the gateway's position in one currency from
	// conversions; the spread accumulates here.
	AccountFXPosition AccountType = "fx_position"
	// AccountWorld is the external bank: deposits come from it.
	AccountWorld AccountType = "world"
)

// accountTypes is the whole chart, with each type's rules.
var accountTypes = map[AccountType]struct {
	perCard     bool // one account per card (else one per merchant and currency)
	constrained bool // the balance must never go below zero
	billable    bool // movements appear in the merchant's bill export
}{
	AccountFunding:       {constrained: true, billable: true},
	AccountCardAvailable: {perCard: true, constrained: true, billable: true},
	// A card's held funds and its receivable are the merchant's position
	// too (issue 29, point 2): their movements are bill lines, so that the
	// bill and the statement show holds and what a card owes.
	AccountCardHeld:          {perCard: true, constrained: true, billable: true},
	AccountCardReceivable:    {perCard: true, billable: true},
	AccountRemitInFlight:     {constrained: true},
	AccountNetworkSettlement: {},
	AccountRailSettlement:    {},
	AccountFeeRevenue:        {},
	AccountFXPosition:        {},
	AccountWorld:             {},
}

// AccountTypes lists the chart in a stable order.
func AccountTypes() []AccountType {
	return []AccountType{
		AccountFunding, AccountCardAvailable, AccountCardHeld, AccountCardReceivable,
		AccountRemitInFlight, AccountNetworkSettlement, AccountRailSettlement,
		AccountFeeRevenue, AccountFXPosition, AccountWorld,
	}
}

// Constrained reports whether balances of this type must stay at or above
// zero. The database enforces the same rule with a CHECK constraint.
func (t AccountType) Constrained() bool { return accountTypes[t].constrained }

// Billable reports whether movements of this type are shown in the bill.
func (t AccountType) Billable() bool { return accountTypes[t].billable }

// PerCard reports whether accounts of this type belong to one card.
func (t AccountType) PerCard() bool { return accountTypes[t].perCard }

// Valid reports whether t is a line of the chart.
func (t AccountType) Valid() bool {
	_, ok := accountTypes[t]
	return ok
}

// Account identifies one account: its merchant, its type, its currency and,
// for card accounts, the card token.
type Account struct {
	Merchant int64
	Type     AccountType
	Currency string
	Card     string
}

// MerchantAccount is the account of type t of merchant m in currency cur.
func MerchantAccount(m int64, t AccountType, cur string) Account {
	return Account{Merchant: m, Type: t, Currency: cur}
}

// CardAccount is the account of type t of card cardNo.
func CardAccount(m int64, t AccountType, cur, cardNo string) Account {
	return Account{Merchant: m, Type: t, Currency: cur, Card: cardNo}
}

// Address is the account's unique, human-readable name, the one auditors see:
// "m:17:funding:USD" or "m:17:card_available:USD:crd_…". It is also what the
// hash chain commits to.
func (a Account) Address() string {
	return string(a.AppendAddress(make([]byte, 0, 64)))
}

// AppendAddress appends a.Address() to b, allocating nothing when b has
// room.
func (a Account) AppendAddress(b []byte) []byte {
	b = strconv.AppendInt(append(b, "m:"...), a.Merchant, 10)
	b = append(append(b, ':'), a.Type...)
	b = append(append(b, ':'), a.Currency...)
	if a.Card != "" {
		b = append(append(b, ':'), a.Card...)
	}
	return b
}

// Validate checks that the account is well formed.
func (a Account) Validate() error {
	if a.Merchant <= 0 {
		return Errorf(EINVALID, "account without a merchant")
	}
	if !a.Type.Valid() {
		return Errorf(EINVALID, "unknown account type %q", truncate(string(a.Type), 32))
	}
	if _, err := LookupCurrency(a.Currency); err != nil {
		return err
	}
	if a.Type.PerCard() != (a.Card != "") {
		return Errorf(EINVALID, "account type %s and card %q disagree", a.Type, truncate(a.Card, 40))
	}
	if a.Card != "" && !isRefText(a.Card) {
		return Errorf(EINVALID, "card reference %q has characters outside [A-Za-z0-9_.:-]", truncate(a.Card, 40))
	}
	return nil
}
