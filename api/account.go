package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// accountView is the profile of GET /shop/account (docs/api.md).
type accountView struct {
	ShopNo              string           `json:"shopNo"`
	Name                string           `json:"name"`
	Status              string           `json:"status"`
	KYBTier             string           `json:"kybTier"`
	Currencies          []string         `json:"currencies"`
	Balances            []balanceView    `json:"balances"`
	Receivables         []receivableView `json:"receivables"`
	Limits              []limitView      `json:"limits"`
	LastAuthenticatedAt *string          `json:"lastAuthenticatedAt"`
	CreatedAt           string           `json:"createdAt"`
}

type balanceView struct {
	Currency string         `json:"currency"`
	Balance  postings.Money `json:"balance"`
}

// receivableView is what the merchant's cards owe in one currency: the sum
// of their receivables (captures the network made beyond what a card had),
// repaid from each card's next credits.
type receivableView struct {
	Currency string         `json:"currency"`
	Amount   postings.Money `json:"amount"`
}

type limitView struct {
	Currency          string         `json:"currency"`
	CardBalanceMax    postings.Money `json:"cardBalanceMax"`
	DailyCardIssueMax postings.Money `json:"dailyCardIssueMax"`
	DailyCardIssued   postings.Money `json:"dailyCardIssued"`
	RemittanceMax     postings.Money `json:"remittanceMax"`
}

func newAccountView(p *cards.Profile) accountView {
	v := accountView{
		ShopNo: p.Merchant.ShopNo, Name: p.Merchant.Name, Status: p.Merchant.Status, KYBTier: p.KYBTier,
		Currencies:          append([]string{}, p.Merchant.Currencies...),
		Balances:            make([]balanceView, 0, len(p.Balances)),
		Receivables:         make([]receivableView, 0, len(p.Receivables)),
		Limits:              make([]limitView, 0, len(p.Limits)),
		LastAuthenticatedAt: timestampOrNil(p.LastAuthenticatedAt),
		CreatedAt:           timestamp(p.Merchant.CreatedAt),
	}
	for _, b := range p.Balances {
		v.Balances = append(v.Balances, balanceView{Currency: b.Currency, Balance: money(b.Balance, b.Currency)})
	}
	for _, r := range p.Receivables {
		v.Receivables = append(v.Receivables, receivableView{Currency: r.Currency, Amount: money(r.Amount, r.Currency)})
	}
	for _, lim := range p.Limits {
		v.Limits = append(v.Limits, limitView{
			Currency:          lim.Currency,
			CardBalanceMax:    money(lim.CardBalanceMax, lim.Currency),
			DailyCardIssueMax: money(lim.DailyCardIssueMax, lim.Currency),
			DailyCardIssued:   money(lim.DailyCardIssued, lim.Currency),
			RemittanceMax:     money(lim.RemittanceMax, lim.Currency),
		})
	}
	return v
}

// handleAccount answers GET /shop/account: the merchant's profile.
func handleAccount(l Accounts) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := l.Profile(c.Request.Context(), merchantOf(c).ID)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newAccountView(p))
	}
}

// binView is one entry of GET /shop/card/bin/list (spec 2.3). The network
// appears twice, as cardNetwork and as brand, for both variants of the
// interface.
type binView struct {
	Bin         string `json:"bin"`
	CardNetwork string `json:"cardNetwork"`
	Brand       string `json:"brand"`
	Currency    string `json:"currency"`
	Type        string `json:"type"`
}

// handleBINList answers GET /shop/card/bin/list: the BIN entries open to the
// merchant, in the ledger's order (network, BIN, currency).
func handleBINList(l Accounts) gin.HandlerFunc {
	return func(c *gin.Context) {
		bins, err := l.MerchantBINs(c.Request.Context(), merchantOf(c).ID)
		if err != nil {
			writeError(c, err)
			return
		}
		out := make([]binView, 0, len(bins))
		for _, b := range bins {
			typ := b.Type
			if typ == "" {
				typ = "VIRTUAL"
			}
			out = append(out, binView{Bin: b.Bin, CardNetwork: b.Network, Brand: b.Network, Currency: b.Currency, Type: typ})
		}
		writeOK(c, out)
	}
}
