package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Text bounds of card requests.
const (
	remarkCharsMax = 255
	reasonCharsMax = 255
)

// cardView is the card of spec 2.4 as every card endpoint renders it
// (docs/api.md). balance is what the card can spend; held is what open
// authorizations hold on top of it; receivable is what the card owes (a
// capture the network made beyond what it had), repaid from its next
// credits.
type cardView struct {
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

func newCardView(k *cards.Card) cardView {
	return cardView{
		CardNo: k.CardNo, Last4: k.Last4, Status: k.Status,
		Balance: money(k.Available, k.Currency), Held: money(k.Held, k.Currency), Receivable: money(k.Receivable, k.Currency),
		Currency: k.Currency, CreatedAt: timestamp(k.CreatedAt),
		Bin: k.Bin, CardNetwork: k.Network,
		Expiry: fmt.Sprintf("%02d/%02d", k.ExpiryMonth, k.ExpiryYear%100),
		PanRef: k.PanRef, Remark: k.Remark,
	}
}

// decodeCardCreate decodes POST /shop/card/create. amount may be zero (a
// card funded later by a transfer) but not negative.
func decodeCardCreate(raw []byte, allow callbackurl.AllowList) (cards.CreateCardInput, error) {
	var req struct {
		Bin, Currency, Remark, CallbackURL string
		Amount                             amountText
	}
	err := decodeObject(raw, []field{
		{name: "bin", required: true, into: &req.Bin},
		{name: "currency", required: true, into: &req.Currency},
		{name: "amount", required: true, into: &req.Amount},
		{name: "remark", into: &req.Remark},
		{name: "callback_url", into: &req.CallbackURL},
	})
	if err != nil {
		return cards.CreateCardInput{}, err
	}
	if err := checkBIN("bin", req.Bin); err != nil {
		return cards.CreateCardInput{}, err
	}
	cur, err := parseCurrency("currency", req.Currency)
	if err != nil {
		return cards.CreateCardInput{}, err
	}
	amount, err := postings.ParseSignedAmount(string(req.Amount), cur)
	if err != nil {
		return cards.CreateCardInput{}, postings.WithField(err, "amount")
	}
	if amount < 0 {
		return cards.CreateCardInput{}, postings.FieldErrorf("amount", "must not be negative")
	}
	if err := postings.CheckText("remark", req.Remark, remarkCharsMax); err != nil {
		return cards.CreateCardInput{}, err
	}
	if req.CallbackURL != "" {
		if err := checkCallbackURL("callback_url", req.CallbackURL, allow); err != nil {
			return cards.CreateCardInput{}, err
		}
	}
	return cards.CreateCardInput{Bin: req.Bin, Currency: cur.Code, Amount: amount,
		Remark: req.Remark, CallbackURL: req.CallbackURL}, nil
}

// handleCardCreate answers POST /shop/card/create: issues a card and funds
// it from the funding account of its currency.
func handleCardCreate(l Cards, allow callbackurl.AllowList) gin.HandlerFunc {
	return func(c *gin.Context) {
		in, err := decodeCardCreate(bodyOf(c), allow)
		if err != nil {
			writeError(c, err)
			return
		}
		card, err := l.CreateCard(c.Request.Context(), merchantOf(c).ID, in, idempotencyOf(c))
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newCardView(card))
	}
}

// queryCardNo reads the cardNo query parameter of the GET card endpoints.
func queryCardNo(c *gin.Context) (string, error) {
	cardNo, ok := c.GetQuery("cardNo")
	if !ok || cardNo == "" {
		return "", postings.FieldErrorf("cardNo", "query parameter is required")
	}
	return cardNo, checkCardNo("cardNo", cardNo)
}

// handleCardInfo answers GET /shop/card/info?cardNo=.
func handleCardInfo(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNo, err := queryCardNo(c)
		if err != nil {
			writeError(c, err)
			return
		}
		card, err := l.Card(c.Request.Context(), merchantOf(c).ID, cardNo)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newCardView(card))
	}
}

// cardBalanceView is the answer of GET /shop/card/balance.
type cardBalanceView struct {
	CardNo   string         `json:"cardNo"`
	Balance  postings.Money `json:"balance"`
	Held     postings.Money `json:"held"`
	Currency string         `json:"currency"`
}

// handleCardBalance answers GET /shop/card/balance?cardNo=.
func handleCardBalance(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNo, err := queryCardNo(c)
		if err != nil {
			writeError(c, err)
			return
		}
		card, err := l.Card(c.Request.Context(), merchantOf(c).ID, cardNo)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, cardBalanceView{CardNo: card.CardNo, Balance: money(card.Available, card.Currency),
			Held: money(card.Held, card.Currency), Currency: card.Currency})
	}
}

// decodeCardNos decodes POST /shop/card/balance/batch: 1 to cards.CardsMax
// card tokens. Duplicates are allowed.
func decodeCardNos(raw []byte) ([]string, error) {
	var cardNos []string
	err := decodeObject(raw, []field{{name: "cardNos", required: true, into: &cardNos, itemsMax: cards.CardsMax}})
	if err != nil {
		return nil, err
	}
	if len(cardNos) == 0 {
		return nil, postings.FieldErrorf("cardNos", "must list 1 to %d card numbers", cards.CardsMax)
	}
	for i, n := range cardNos {
		if err := checkCardNo(fmt.Sprintf("cardNos[%d]", i), n); err != nil {
			return nil, err
		}
	}
	return cardNos, nil
}

// batchItemView is one answer of the batch: found false carries nothing but
// the card number (unknown, or another merchant's).
type batchItemView struct {
	CardNo   string          `json:"cardNo"`
	Found    bool            `json:"found"`
	Balance  *postings.Money `json:"balance,omitempty"`
	Held     *postings.Money `json:"held,omitempty"`
	Currency string          `json:"currency,omitempty"`
	Status   string          `json:"status,omitempty"`
}

// handleCardBalanceBatch answers POST /shop/card/balance/batch: one item per
// requested card number, in the order of the request, duplicates repeated.
func handleCardBalanceBatch(l Cards, keys ReadKeys) gin.HandlerFunc {
	return func(c *gin.Context) {
		cardNos, err := decodeCardNos(bodyOf(c))
		if err != nil {
			writeError(c, err)
			return
		}
		// A read: its key is checked and claimed, so that it serves no
		// other request, but its answer is not stored (docs/api.md).
		if err := keys.ClaimReadIdempotency(c.Request.Context(), merchantOf(c).ID, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		unique := make([]string, 0, len(cardNos))
		seen := make(map[string]bool, len(cardNos))
		for _, n := range cardNos {
			if !seen[n] {
				seen[n] = true
				unique = append(unique, n)
			}
		}
		cards, err := l.Cards(c.Request.Context(), merchantOf(c).ID, unique)
		if err != nil {
			writeError(c, err)
			return
		}
		list := make([]batchItemView, 0, len(cardNos))
		for _, n := range cardNos {
			k, ok := cards[n]
			if !ok || k == nil {
				list = append(list, batchItemView{CardNo: n})
				continue
			}
			bal, held := money(k.Available, k.Currency), money(k.Held, k.Currency)
			list = append(list, batchItemView{CardNo: n, Found: true, Balance: &bal, Held: &held,
				Currency: k.Currency, Status: k.Status})
		}
		writeOK(c, gin.H{"list": list})
	}
}

// cardRequest is the body of freeze, unfreeze and cancel: a card number and,
// for freeze only, an optional reason.
type cardRequest struct {
	CardNo string
	Reason string
}

func decodeCardRequest(raw []byte, withReason bool) (cardRequest, error) {
	var req cardRequest
	fields := []field{{name: "cardNo", required: true, into: &req.CardNo}}
	if withReason {
		fields = append(fields, field{name: "reason", into: &req.Reason})
	}
	if err := decodeObject(raw, fields); err != nil {
		return cardRequest{}, err
	}
	if err := checkCardNo("cardNo", req.CardNo); err != nil {
		return cardRequest{}, err
	}
	if err := postings.CheckText("reason", req.Reason, reasonCharsMax); err != nil {
		return cardRequest{}, err
	}
	return req, nil
}

// cardAction is what freeze, unfreeze and cancel do with their request.
type cardAction func(ctx context.Context, merchant int64, req cardRequest, idem *ledger.Idempotency) error

// handleCardAction answers POST /shop/card/freeze, unfreeze and cancel, all
// with data null (the spec shows null for freeze and cancel). Freezing a
// frozen card, or unfreezing an active one, succeeds and changes nothing. A
// cancellation's refund shows in the card (balance 0, CANCELLED) and in the
// bill (CARD_CANCEL_REFUND). Only freeze takes a reason.
func handleCardAction(withReason bool, act cardAction) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, err := decodeCardRequest(bodyOf(c), withReason)
		if err != nil {
			writeError(c, err)
			return
		}
		if err := act(c.Request.Context(), merchantOf(c).ID, req, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, nil)
	}
}

func freezeCard(l Cards) cardAction {
	return func(ctx context.Context, m int64, req cardRequest, idem *ledger.Idempotency) error {
		_, err := l.FreezeCard(ctx, m, req.CardNo, req.Reason, idem)
		return err
	}
}

func unfreezeCard(l Cards) cardAction {
	return func(ctx context.Context, m int64, req cardRequest, idem *ledger.Idempotency) error {
		_, err := l.UnfreezeCard(ctx, m, req.CardNo, idem)
		return err
	}
}

func cancelCard(l Cards) cardAction {
	return func(ctx context.Context, m int64, req cardRequest, idem *ledger.Idempotency) error {
		_, err := l.CancelCard(ctx, m, req.CardNo, idem)
		return err
	}
}

// decodeTransfer decodes POST /shop/card/transfer. amount is positive, in
// currency (the funding side).
func decodeTransfer(raw []byte) (cards.TransferInput, error) {
	var req struct {
		CardNo, Currency, Direction string
		Amount                      amountText
	}
	err := decodeObject(raw, []field{
		{name: "cardNo", required: true, into: &req.CardNo},
		{name: "amount", required: true, into: &req.Amount},
		{name: "currency", required: true, into: &req.Currency},
		{name: "direction", required: true, into: &req.Direction},
	})
	if err != nil {
		return cards.TransferInput{}, err
	}
	if err := checkCardNo("cardNo", req.CardNo); err != nil {
		return cards.TransferInput{}, err
	}
	cur, amount, err := parseMoney(req.Currency, req.Amount)
	if err != nil {
		return cards.TransferInput{}, err
	}
	if req.Direction != cards.DirectionIn && req.Direction != cards.DirectionOut {
		return cards.TransferInput{}, postings.FieldErrorf("direction", "must be IN or OUT")
	}
	return cards.TransferInput{CardNo: req.CardNo, Amount: amount, Currency: cur.Code, Direction: req.Direction}, nil
}

// transferView is the answer of POST /shop/card/transfer. fxRate, midRate
// and spreadBps appear only on a cross-currency transfer.
type transferView struct {
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

func newTransferView(r *cards.TransferResult) transferView {
	v := transferView{
		TxID: r.TxID, CardNo: r.CardNo, Direction: r.Direction,
		Amount: money(r.Amount, r.Currency), Currency: r.Currency,
		CardAmount: money(r.CardAmount, r.CardCurrency), CardCurrency: r.CardCurrency,
		CardBalance:    money(r.CardBalance, r.CardCurrency),
		FundingBalance: money(r.FundingBalance, r.Currency),
		CreatedAt:      timestamp(r.CreatedAt),
	}
	if r.CardCurrency != r.Currency {
		v.FXRate, v.MidRate = json.Number(r.FXRate), json.Number(r.MidRate)
		bps := r.SpreadBps
		v.SpreadBps = &bps
	}
	return v
}

// handleCardTransfer answers POST /shop/card/transfer.
func handleCardTransfer(l Cards) gin.HandlerFunc {
	return func(c *gin.Context) {
		in, err := decodeTransfer(bodyOf(c))
		if err != nil {
			writeError(c, err)
			return
		}
		res, err := l.Transfer(c.Request.Context(), merchantOf(c).ID, in, idempotencyOf(c))
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newTransferView(res))
	}
}
