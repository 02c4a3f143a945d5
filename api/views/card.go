package views

import (
	"encoding/json"
	"fmt"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// Card is the card of spec 2.4 as every card endpoint renders it
// (docs/api.md). balance is what the card can spend; held is what open
// authorizations hold on top of it; receivable is what the card owes (a
// capture the network made beyond what it had), repaid from its next
// credits.
type Card struct {
	CardNo      string         `json:"cardNo"`
	Last4       string         `json:"last4"`
	Status      string         `json:"status"`
	Balance     postings.Money `json:"balance"`
	Held        postings.Money `json:"held"`
	Receivable  postings.Money `json:"receivable"`
	Currency    string         `json:"currency"`
	CreatedAt   string         `json:"createdAt"`
	Bin         string         `json:"bin"`
	CardNetwork string         `json:"cardNetwork"`
	Expiry      string         `json:"expiry"`
	PanRef      string         `json:"panRef"`
	Remark      string         `json:"remark"`
}

// NewCard is k as the card endpoints answer it.
func NewCard(k *cards.Card) Card {
	return Card{
		CardNo: k.CardNo, Last4: k.Last4, Status: k.Status,
		Balance: Money(k.Available, k.Currency), Held: Money(k.Held, k.Currency), Receivable: Money(k.Receivable, k.Currency),
		Currency: k.Currency, CreatedAt: Timestamp(k.CreatedAt),
		Bin: k.Bin, CardNetwork: k.Network,
		Expiry: fmt.Sprintf("%02d/%02d", k.ExpiryMonth, k.ExpiryYear%100),
		PanRef: k.PanRef, Remark: k.Remark,
	}
}

// CardList is the paginated structure of spec 2.1 with card objects, the
// answer of GET /shop/card/list.
type CardList struct {
	Total int64  `json:"total"`
	List  []Card `json:"list"`
}

// NewCardList is a page of the card list.
func NewCardList(p *cards.CardPage) CardList {
	v := CardList{Total: p.Total, List: make([]Card, len(p.Cards))}
	for i, k := range p.Cards {
		v.List[i] = NewCard(k)
	}
	return v
}

// CardBalance is the answer of GET /shop/card/balance.
type CardBalance struct {
	CardNo   string         `json:"cardNo"`
	Balance  postings.Money `json:"balance"`
	Held     postings.Money `json:"held"`
	Currency string         `json:"currency"`
}

// NewCardBalance is k's balance as GET /shop/card/balance answers it.
func NewCardBalance(k *cards.Card) CardBalance {
	return CardBalance{CardNo: k.CardNo, Balance: Money(k.Available, k.Currency),
		Held: Money(k.Held, k.Currency), Currency: k.Currency}
}

// BatchItem is one answer of POST /shop/card/balance/batch: found false
// carries nothing but the card number (unknown, or another merchant's).
type BatchItem struct {
	CardNo   string          `json:"cardNo"`
	Found    bool            `json:"found"`
	Balance  *postings.Money `json:"balance,omitempty"`
	Held     *postings.Money `json:"held,omitempty"`
	Currency string          `json:"currency,omitempty"`
	Status   string          `json:"status,omitempty"`
}

// NewBatchItem is the item of cardNo; k is nil when the merchant has no
// such card.
func NewBatchItem(cardNo string, k *cards.Card) BatchItem {
	if k == nil {
		return BatchItem{CardNo: cardNo}
	}
	bal, held := Money(k.Available, k.Currency), Money(k.Held, k.Currency)
	return BatchItem{CardNo: cardNo, Found: true, Balance: &bal, Held: &held, Currency: k.Currency, Status: k.Status}
}

// Transfer is the answer of POST /shop/card/transfer. fxRate, midRate and
// spreadBps appear only on a cross-currency transfer.
type Transfer struct {
	TxID           string         `json:"txId"`
	CardNo         string         `json:"cardNo"`
	Direction      string         `json:"direction"`
	Amount         postings.Money `json:"amount"`
	Currency       string         `json:"currency"`
	CardAmount     postings.Money `json:"cardAmount"`
	CardCurrency   string         `json:"cardCurrency"`
	FXRate         json.Number    `json:"fxRate,omitempty"`
	MidRate        json.Number    `json:"midRate,omitempty"`
	SpreadBps      *int64         `json:"spreadBps,omitempty"`
	CardBalance    postings.Money `json:"cardBalance"`
	FundingBalance postings.Money `json:"fundingBalance"`
	CreatedAt      string         `json:"createdAt"`
}

// NewTransfer is the answer of a transfer.
func NewTransfer(r *cards.TransferResult) Transfer {
	v := Transfer{
		TxID: r.TxID, CardNo: r.CardNo, Direction: r.Direction,
		Amount: Money(r.Amount, r.Currency), Currency: r.Currency,
		CardAmount: Money(r.CardAmount, r.CardCurrency), CardCurrency: r.CardCurrency,
		CardBalance:    Money(r.CardBalance, r.CardCurrency),
		FundingBalance: Money(r.FundingBalance, r.Currency),
		CreatedAt:      Timestamp(r.CreatedAt),
	}
	if r.CardCurrency != r.Currency {
		v.FXRate, v.MidRate = json.Number(r.FXRate), json.Number(r.MidRate)
		bps := r.SpreadBps
		v.SpreadBps = &bps
	}
	return v
}

// BIN is one entry of GET /shop/card/bin/list (spec 2.3). The network
// appears twice, as cardNetwork and as brand, for both variants of the
// interface.
type BIN struct {
	Bin         string `json:"bin"`
	CardNetwork string `json:"cardNetwork"`
	Brand       string `json:"brand"`
	Currency    string `json:"currency"`
	Type        string `json:"type"`
}

// NewBINs is the BIN list, in the given order; a BIN of no type is VIRTUAL.
func NewBINs(bins []cards.BIN) []BIN {
	out := make([]BIN, 0, len(bins))
	for _, b := range bins {
		typ := b.Type
		if typ == "" {
			typ = "VIRTUAL"
		}
		out = append(out, BIN{Bin: b.Bin, CardNetwork: b.Network, Brand: b.Network, Currency: b.Currency, Type: typ})
	}
	return out
}
