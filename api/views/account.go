package views

import (
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// Account is the profile of GET /shop/account (docs/api.md); the
// operator's commands print it too (api.AccountView).
type Account struct {
	ShopNo              string       `json:"shopNo"`
	Name                string       `json:"name"`
	Status              string       `json:"status"`
	KYBTier             string       `json:"kybTier"`
	Currencies          []string     `json:"currencies"`
	Balances            []Balance    `json:"balances"`
	Receivables         []Receivable `json:"receivables"`
	Limits              []Limit      `json:"limits"`
	LastAuthenticatedAt *string      `json:"lastAuthenticatedAt"`
	CreatedAt           string       `json:"createdAt"`
}

// Balance is a funding account's balance in one currency.
type Balance struct {
	Currency string         `json:"currency"`
	Balance  postings.Money `json:"balance"`
}

// Receivable is what the merchant's cards owe in one currency: the sum of
// their receivables (captures the network made beyond what a card had),
// repaid from each card's next credits.
type Receivable struct {
	Currency string         `json:"currency"`
	Amount   postings.Money `json:"amount"`
}

// Limit is the merchant's limits in one currency.
type Limit struct {
	Currency          string         `json:"currency"`
	CardBalanceMax    postings.Money `json:"cardBalanceMax"`
	DailyCardIssueMax postings.Money `json:"dailyCardIssueMax"`
	DailyCardIssued   postings.Money `json:"dailyCardIssued"`
	RemittanceMax     postings.Money `json:"remittanceMax"`
}

// NewAccount is the answer of GET /shop/account for p.
func NewAccount(p *cards.Profile) Account {
	v := Account{
		ShopNo: p.Merchant.ShopNo, Name: p.Merchant.Name, Status: p.Merchant.Status, KYBTier: p.KYBTier,
		Currencies:          append([]string{}, p.Merchant.Currencies...),
		Balances:            make([]Balance, 0, len(p.Balances)),
		Receivables:         make([]Receivable, 0, len(p.Receivables)),
		Limits:              make([]Limit, 0, len(p.Limits)),
		LastAuthenticatedAt: TimestampOrNil(p.LastAuthenticatedAt),
		CreatedAt:           Timestamp(p.Merchant.CreatedAt),
	}
	for _, b := range p.Balances {
		v.Balances = append(v.Balances, Balance{Currency: b.Currency, Balance: Money(b.Balance, b.Currency)})
	}
	for _, r := range p.Receivables {
		v.Receivables = append(v.Receivables, Receivable{Currency: r.Currency, Amount: Money(r.Amount, r.Currency)})
	}
	for _, lim := range p.Limits {
		v.Limits = append(v.Limits, Limit{
			Currency:          lim.Currency,
			CardBalanceMax:    Money(lim.CardBalanceMax, lim.Currency),
			DailyCardIssueMax: Money(lim.DailyCardIssueMax, lim.Currency),
			DailyCardIssued:   Money(lim.DailyCardIssued, lim.Currency),
			RemittanceMax:     Money(lim.RemittanceMax, lim.Currency),
		})
	}
	return v
}
