package client

import (
	"context"
	"time"
)

// Account is the merchant profile (spec 2.2; docs/openapi.yaml Account).
type Account struct {
	ShopNo     string           `json:"shopNo"`
	Name       string           `json:"name"`
	Status     string           `json:"status"`  // ACTIVE
	KYBTier    string           `json:"kybTier"` // TIER_1, TIER_2, TIER_3
	Currencies []string         `json:"currencies"`
	Balances   []FundingBalance `json:"balances"`
	// Receivables is what the merchant's cards owe, per currency.
	Receivables []Receivable `json:"receivables"`
	Limits      []Limit      `json:"limits"`
	// LastAuthenticatedAt is nil before the first authentication.
	LastAuthenticatedAt *time.Time `json:"lastAuthenticatedAt"`
	CreatedAt           time.Time  `json:"createdAt"`
}

// FundingBalance is one funding account.
type FundingBalance struct {
	Currency string  `json:"currency"`
	Balance  Decimal `json:"balance"`
}

// Receivable is what the cards owe in one currency.
type Receivable struct {
	Currency string  `json:"currency"`
	Amount   Decimal `json:"amount"`
}

// Limit is the merchant's limits in one currency (docs/cards.md).
type Limit struct {
	Currency          string  `json:"currency"`
	CardBalanceMax    Decimal `json:"cardBalanceMax"`
	DailyCardIssueMax Decimal `json:"dailyCardIssueMax"`
	DailyCardIssued   Decimal `json:"dailyCardIssued"`
	RemittanceMax     Decimal `json:"remittanceMax"`
}

// BINEntry is a BIN open to the merchant (spec 2.3): BIN with Currency is
// the input of CreateCard.
type BINEntry struct {
	BIN         string `json:"bin"`
	CardNetwork string `json:"cardNetwork"` // VISA, MASTERCARD
	Brand       string `json:"brand"`       // the same as CardNetwork
	Currency    string `json:"currency"`
	Type        string `json:"type"` // VIRTUAL
}

// Account is GET /shop/account.
func (c *Client) Account(ctx context.Context, opts ...CallOption) (*Account, error) {
	var out Account
	if err := c.call(ctx, opGetAccount, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// BINs is GET /shop/card/bin/list.
func (c *Client) BINs(ctx context.Context, opts ...CallOption) ([]BINEntry, error) {
	var out []BINEntry
	if err := c.call(ctx, opListBINs, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return out, nil
}
