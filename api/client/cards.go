package client

import (
	"context"
	"net/url"
	"time"
)

// CreateCardRequest is the body of POST /shop/card/create.
type CreateCardRequest struct {
	BIN      string `json:"bin"`
	Currency string `json:"currency"`
	// Amount (zero or more) is moved from the funding account of Currency.
	Amount Decimal `json:"amount"`
	Remark string  `json:"remark,omitempty"`
	// CallbackURL receives the card.created callback; none without it.
	CallbackURL string `json:"callback_url,omitempty"`
}

// Card is a card (spec 2.4), as create and info answer it.
type Card struct {
	CardNo      string    `json:"cardNo"`
	Last4       string    `json:"last4"`
	Status      string    `json:"status"` // ACTIVE, FROZEN, CANCELLED
	Balance     Decimal   `json:"balance"`
	Held        Decimal   `json:"held"`
	Receivable  Decimal   `json:"receivable"`
	Currency    string    `json:"currency"`
	CreatedAt   time.Time `json:"createdAt"`
	BIN         string    `json:"bin"`
	CardNetwork string    `json:"cardNetwork"`
	Expiry      string    `json:"expiry"` // MM/YY
	PanRef      string    `json:"panRef"`
	Remark      string    `json:"remark"`
}

// CardBalance is GET /shop/card/balance.
type CardBalance struct {
	CardNo   string  `json:"cardNo"`
	Balance  Decimal `json:"balance"`
	Held     Decimal `json:"held"`
	Currency string  `json:"currency"`
}

// CardBalanceItem is one entry of a batch: Found false for an unknown card
// or another merchant's, with only CardNo set.
type CardBalanceItem struct {
	CardNo   string   `json:"cardNo"`
	Found    bool     `json:"found"`
	Balance  *Decimal `json:"balance,omitempty"`
	Held     *Decimal `json:"held,omitempty"`
	Currency string   `json:"currency,omitempty"`
	Status   string   `json:"status,omitempty"`
}

// cardBalanceBatchRequest and cardBalanceBatch are the batch's body and
// data.
type cardBalanceBatchRequest struct {
	CardNos []string `json:"cardNos"`
}

type cardBalanceBatch struct {
	List []CardBalanceItem `json:"list"`
}

type cardNoRequest struct {
	CardNo string `json:"cardNo"`
}

// FreezeCardRequest is the body of POST /shop/card/freeze.
type FreezeCardRequest struct {
	CardNo string `json:"cardNo"`
	Reason string `json:"reason,omitempty"`
}

// TransferRequest is the body of POST /shop/card/transfer: Amount in
// Currency (the funding side); Direction IN (funding → card) or OUT.
type TransferRequest struct {
	CardNo    string  `json:"cardNo"`
	Amount    Decimal `json:"amount"`
	Currency  string  `json:"currency"`
	Direction string  `json:"direction"`
}

// The directions of a transfer.
const (
	DirectionIn  = "IN"
	DirectionOut = "OUT"
)

// Transfer is what a transfer did. FXRate, MidRate and SpreadBps are set
// only when Currency differs from CardCurrency.
type Transfer struct {
	TxID           string    `json:"txId"`
	CardNo         string    `json:"cardNo"`
	Direction      string    `json:"direction"`
	Amount         Decimal   `json:"amount"`
	Currency       string    `json:"currency"`
	CardAmount     Decimal   `json:"cardAmount"`
	CardCurrency   string    `json:"cardCurrency"`
	FXRate         *Decimal  `json:"fxRate,omitempty"`
	MidRate        *Decimal  `json:"midRate,omitempty"`
	SpreadBps      *int      `json:"spreadBps,omitempty"`
	CardBalance    Decimal   `json:"cardBalance"`
	FundingBalance Decimal   `json:"fundingBalance"`
	CreatedAt      time.Time `json:"createdAt"`
}

// CreateCard is POST /shop/card/create.
func (c *Client) CreateCard(ctx context.Context, req CreateCardRequest, opts ...CallOption) (*Card, error) {
	var out Card
	if err := c.call(ctx, opCreateCard, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Card is GET /shop/card/info.
func (c *Client) Card(ctx context.Context, cardNo string, opts ...CallOption) (*Card, error) {
	var out Card
	if err := c.call(ctx, opGetCard, url.Values{"cardNo": {cardNo}}, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// CardBalance is GET /shop/card/balance.
func (c *Client) CardBalance(ctx context.Context, cardNo string, opts ...CallOption) (*CardBalance, error) {
	var out CardBalance
	if err := c.call(ctx, opGetCardBalance, url.Values{"cardNo": {cardNo}}, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// CardBalances is POST /shop/card/balance/batch: one item per card number,
// in order (1 to 100 of them).
func (c *Client) CardBalances(ctx context.Context, cardNos []string, opts ...CallOption) ([]CardBalanceItem, error) {
	var out cardBalanceBatch
	if err := c.call(ctx, opGetCardBalances, nil, cardBalanceBatchRequest{CardNos: cardNos}, &out, opts); err != nil {
		return nil, err
	}
	return out.List, nil
}

// FreezeCard is POST /shop/card/freeze.
func (c *Client) FreezeCard(ctx context.Context, req FreezeCardRequest, opts ...CallOption) error {
	return c.call(ctx, opFreezeCard, nil, req, nil, opts)
}

// UnfreezeCard is POST /shop/card/unfreeze.
func (c *Client) UnfreezeCard(ctx context.Context, cardNo string, opts ...CallOption) error {
	return c.call(ctx, opUnfreezeCard, nil, cardNoRequest{CardNo: cardNo}, nil, opts)
}

// CancelCard is POST /shop/card/cancel.
func (c *Client) CancelCard(ctx context.Context, cardNo string, opts ...CallOption) error {
	return c.call(ctx, opCancelCard, nil, cardNoRequest{CardNo: cardNo}, nil, opts)
}

// Transfer is POST /shop/card/transfer.
func (c *Client) Transfer(ctx context.Context, req TransferRequest, opts ...CallOption) (*Transfer, error) {
	var out Transfer
	if err := c.call(ctx, opTransferCard, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
