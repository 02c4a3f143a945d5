package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/postings"
)

// The card network side (docs/network.md): authorizations put money on
// hold, clearing captures it, reversals and expiry release it, refunds
// credit it back. Each network message is idempotent on its message id (an
// idempotency key of scope "network"): a repeat has no second effect and
// gets the first answer. A hold is resolved at most once in total: its row
// tracks what is still held, and every change to it happens under the
// merchant's head lock together with the journal entries that move the money.

// ISO 8583 response codes of an authorization decision.
const (
	RespApproved     = "00"
	RespDoNotHonour  = "05"
	RespUnknownCard  = "14"
	RespCancelled    = "46"
	RespInsufficient = "51"
	RespExpired      = "54"
	RespNotPermitted = "57" // the spec's code for a frozen card
	RespOverLimit    = "61"
)

// Authorization statuses.
const (
	AuthOpen     = "OPEN"
	AuthCleared  = "CLEARED"
	AuthReversed = "REVERSED"
	AuthExpired  = "EXPIRED"
)

// Event types of the network side.
const (
	EventAuthApproved = "authorization.approved"
	EventAuthDeclined = "authorization.declined"
	EventAuthCleared  = "authorization.cleared"
	EventAuthReversed = "authorization.reversed"
	EventAuthExpired  = "authorization.expired"
	EventCardRefund   = "card.refunded"
)

// CrossBorderFeeBps is the fee on an authorization in another currency than
// the card's: 1.5% of the converted amount, rounded up, held with the
// authorization and booked as a FEE entry when it is captured.
const CrossBorderFeeBps = postings.CrossBorderFeeBps

// AuthRequest is an authorization request from the network. Amount is in
// minor units of Currency, the transaction's currency.
type AuthRequest struct {
	MessageID       string `json:"messageId"`
	CardNo          string `json:"cardNo"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	MerchantName    string `json:"merchantName"`
	MCC             string `json:"mcc"`
	MerchantCountry string `json:"merchantCountry"`
}

// AuthResult is the decision.
type AuthResult struct {
	AuthID       string    `json:"authId,omitempty"`
	Approved     bool      `json:"approved"`
	Code         string    `json:"code"`
	Reason       string    `json:"reason"`
	CardNo       string    `json:"cardNo"`
	Amount       int64     `json:"amount"`
	Currency     string    `json:"currency"`
	CardAmount   int64     `json:"cardAmount,omitempty"` // converted, card currency
	Fee          int64     `json:"fee,omitempty"`
	CardCurrency string    `json:"cardCurrency,omitempty"`
	FXRate       string    `json:"fxRate,omitempty"`
	Available    int64     `json:"available"` // after the decision
	CreatedAt    time.Time `json:"createdAt"`
}

// ClearRequest captures an authorization. Amount is in the authorization's
// transaction currency; it may be below, equal to or above the hold.
type ClearRequest struct {
	MessageID string `json:"messageId"`
	AuthID    string `json:"authId"`
	Amount    int64  `json:"amount"`
}

// ReverseRequest releases all (Amount 0) or part of a hold. Amount is in the
// authorization's transaction currency.
type ReverseRequest struct {
	MessageID string `json:"messageId"`
	AuthID    string `json:"authId"`
	Amount    int64  `json:"amount,omitempty"`
}

// RefundRequest credits a card (or, for a cancelled card, the funding
// account). Amount is in minor units of Currency, which must be the card's.
type RefundRequest struct {
	MessageID string `json:"messageId"`
	CardNo    string `json:"cardNo"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

// HoldResult is what a clearing, reversal or expiry did to a hold. Amounts
// are minor units of the card's currency.
type HoldResult struct {
	AuthID     string    `json:"authId"`
	CardNo     string    `json:"cardNo"`
	Status     string    `json:"status"`
	Currency   string    `json:"currency"`
	Captured   int64     `json:"captured"`   // paid to the network
	Fee        int64     `json:"fee"`        // booked as FEE
	Released   int64     `json:"released"`   // given back by this message
	Receivable int64     `json:"receivable"` // a capture the card could not cover, carried on its receivable
	Held       int64     `json:"held"`       // still on hold
	Available  int64     `json:"available"`  // the card's available balance after
	CreatedAt  time.Time `json:"createdAt"`
}

// RefundResult is what a refund did.
type RefundResult struct {
	CardNo    string    `json:"cardNo"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Credited  string    `json:"credited"` // "card" or "funding" (cancelled card)
	Available int64     `json:"available"`
	CreatedAt time.Time `json:"createdAt"`
}

func errAuthNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonAuthorization, "authorization not found")
}

// networkIdem is the idempotency of a network message: the message id,
// with the kind of message in the fingerprint, so that one id reused for
// another message is a conflict.
func networkIdem(messageID string) (*Idempotency, error) {
	if !postings.IsRefText(messageID) {
		return nil, postings.FieldErrorf("messageId", "must be 1 to 64 characters of [A-Za-z0-9_.:-]")
	}
	return &Idempotency{Scope: ScopeNetwork, Key: messageID}, nil
}

// cardMerchant finds the merchant of a card, outside any batch; the batch
// reads the card again under the merchant's lock.
//
// A card never changes merchant, so the answer is cached (bounded, started
// over when full): a network message costs no read before its batch.
func (l *Ledger) cardMerchant(ctx context.Context, cardNo string) (int64, bool, error) {
	if m, ok := l.cardOwners.get(cardNo); ok {
		return m, true, nil
	}
	var m int64
	found := false
	err := l.Query(ctx, stmtCardMerchant, func(rows pgx.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&m); err != nil {
				return err
			}
		}
		return nil
	}, cardNo)
	if err != nil || !found {
		return 0, false, err // not cached when absent: the card may be created later
	}
	l.cardOwners.put(cardNo, m)
	return m, true, nil
}

// stmtCardMerchant is prepared: a miss of the cache above is one statement
// per message for a card not seen since the start, and planning it each
// time cost more than running it (scenario 3 of the bench: 320 ms of
// planning against 405 ms of execution in a window).
var stmtCardMerchant = NewStmt(`select merchant_id from cards where card_no = $1::text`)

// cardOwnersMax bounds the card → merchant cache (about 100 bytes each).
const cardOwnersMax = 1 << 17

type cardOwners struct {
	mu sync.RWMutex
	m  map[string]int64
}

func (c *cardOwners) get(cardNo string) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m, ok := c.m[cardNo]
	return m, ok
}

func (c *cardOwners) put(cardNo string, merchant int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cardOwnersMax {
		c.m = make(map[string]int64)
	}
	c.m[cardNo] = merchant
}

// Authorize decides an authorization in real time.
func (l *Ledger) Authorize(ctx context.Context, req AuthRequest) (*AuthResult, error) {
	idem, err := networkIdem(req.MessageID)
	if err != nil {
		return nil, err
	}
	if req.Amount <= 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	merchant, found := int64(0), false
	if postings.IsRefText(req.CardNo) {
		if merchant, found, err = l.cardMerchant(ctx, req.CardNo); err != nil {
			return nil, err
		}
	}
	if !found {
		return l.declineUnknownCard(ctx, req)
	}
	cmd := &cardCmd{
		cards: []string{req.CardNo},
		fn: func(st *Tx, h *head) (any, error) {
			return st.authorize(h, req)
		},
	}
	return submitCard[AuthResult](ctx, l, merchant, idem, map[string]any{"op": "authorize", "req": req}, cmd)
}

// declineUnknownCard records a decline 14 for a card no merchant has. With
// no merchant there is no head to lock: the attempt's unique message id
// makes a repeat answer the same.
func (l *Ledger) declineUnknownCard(ctx context.Context, req AuthRequest) (*AuthResult, error) {
	now := l.now()
	res := &AuthResult{Code: RespUnknownCard, Reason: "unknown card", CardNo: truncateRef(req.CardNo),
		Amount: req.Amount, Currency: req.Currency, CreatedAt: now}
	_, err := l.db.NewInsert().Model(&authAttemptRow{
		MessageID: req.MessageID, CardNo: res.CardNo, TxnAmount: req.Amount, TxnCurrency: req.Currency,
		ResponseCode: RespUnknownCard, Reason: res.Reason, MerchantName: NullString(req.MerchantName),
		MCC: NullString(req.MCC), MerchantCountry: NullString(req.MerchantCountry), CreatedAt: now,
	}).On("CONFLICT (message_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, MapError(err)
	}
	return res, nil
}

func truncateRef(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

func (st *Tx) authorize(h *head, req AuthRequest) (*AuthResult, error) {
	res := &AuthResult{CardNo: req.CardNo, Amount: req.Amount, Currency: req.Currency, CreatedAt: st.now}
	c, err := st.cardOf(h.merchant.ID, req.CardNo)
	if err != nil {
		return nil, err
	}
	res.CardCurrency = c.row.Currency
	avail, held := cardAccounts(c.row.MerchantID, c.row.Currency, c.row.CardNo)
	if res.Available, err = st.PeekBalance(avail); err != nil {
		return nil, err
	}
	decline := func(code, reason string) (*AuthResult, error) {
		res.Code, res.Reason = code, reason
		return res, st.recordAttempt(h, req, res)
	}
	switch {
	case c.row.Status == CardCancelled:
		return decline(RespCancelled, "card cancelled")
	case c.row.Status == CardFrozen:
		return decline(RespNotPermitted, "card frozen: transaction not permitted")
	case cardExpired(&c.row, st.now):
		return decline(RespExpired, "card expired")
	}
	if maxMinor, err := st.networkMessageMax(req.Currency); err != nil {
		return nil, err
	} else if req.Amount > maxMinor {
		return decline(RespInvalidAmount, "invalid amount: above the largest network message in "+req.Currency)
	}
	// Convert at the operator's mid rate (the cross-border fee is the
	// price of conversion; no spread on top): postings.NewHold rounds the
	// amount and the fee up, the cardholder pays. Later messages take
	// shares of this hold and never convert again.
	cardCur := postings.MustCurrency(c.row.Currency)
	var hold postings.Hold
	if req.Currency == c.row.Currency {
		if hold, err = postings.NewHold(req.Amount, cardCur, cardCur, postings.Rate{}); err != nil {
			return nil, err
		}
	} else {
		from, err := postings.LookupCurrency(req.Currency)
		if err != nil {
			return decline(RespDoNotHonour, "unsupported transaction currency")
		}
		rate, err := st.fxRate(req.Currency, c.row.Currency)
		if err != nil {
			return decline(RespDoNotHonour, "no current exchange rate for "+req.Currency+"/"+c.row.Currency)
		}
		if hold, err = postings.NewHold(req.Amount, from, cardCur, rate.mid); err != nil {
			return decline(RespDoNotHonour, "amount cannot be converted")
		}
		res.FXRate = rate.MidRate
	}
	res.CardAmount, res.Fee = hold.Amount, hold.Fee
	lim, err := st.limit(&h.merchant, c.row.Currency)
	if err != nil {
		return nil, err
	}
	total := res.CardAmount + res.Fee
	switch {
	case total > lim.CardBalanceMax:
		return decline(RespOverLimit, "exceeds the single authorization limit")
	case total > res.Available:
		return decline(RespInsufficient, "insufficient available balance")
	}
	res.AuthID = "auth_" + RandomID(20)
	if _, err := st.Post(postings.Entry{Merchant: h.merchant.ID, Kind: postings.KindCardAuth,
		Refs:     postings.Refs{CardNo: c.row.CardNo, AuthID: res.AuthID},
		Postings: []postings.Posting{{Source: avail, Destination: held, Amount: total, Currency: c.row.Currency}},
	}); err != nil {
		return nil, err
	}
	st.addAuth(authRow{
		AuthID: res.AuthID, MerchantID: h.merchant.ID, CardNo: c.row.CardNo, MessageID: req.MessageID,
		TxnAmount: req.Amount, TxnCurrency: req.Currency, FXRate: NullString(res.FXRate),
		Amount: res.CardAmount, Fee: res.Fee, Currency: c.row.Currency, Held: total, Status: AuthOpen,
		MerchantName: NullString(req.MerchantName), MCC: NullString(req.MCC), MerchantCountry: NullString(req.MerchantCountry),
		ExpiresAt: st.now.Add(st.l.cfg.HoldExpiry), CreatedAt: st.now, UpdatedAt: st.now,
	})
	res.Approved, res.Code, res.Reason = true, RespApproved, "approved"
	res.Available -= total
	return res, st.recordAttempt(h, req, res)
}

// recordAttempt keeps the attempt and its outbox event.
func (st *Tx) recordAttempt(h *head, req AuthRequest, res *AuthResult) error {
	st.ext.network.attempts = append(st.ext.network.attempts, authAttemptRow{
		MessageID: req.MessageID, MerchantID: sql.NullInt64{Int64: h.merchant.ID, Valid: true}, CardNo: req.CardNo,
		TxnAmount: req.Amount, TxnCurrency: req.Currency, Approved: res.Approved, ResponseCode: res.Code,
		Reason: res.Reason, AuthID: NullString(res.AuthID), MerchantName: NullString(req.MerchantName),
		MCC: NullString(req.MCC), MerchantCountry: NullString(req.MerchantCountry), CreatedAt: st.now,
	})
	typ := EventAuthDeclined
	if res.Approved {
		typ = EventAuthApproved
	}
	return st.Emit(h.merchant.ID, Event{Type: typ, Subject: req.CardNo, Data: authEventData(res)})
}

// The network events carry money like every other callback: decimals with
// the currency's places, and times as YYYY-MM-DDThh:mm:ssZ
// (docs/callbacks.md).

func money(minor int64, currency string) postings.Money {
	return postings.Money{Minor: minor, Currency: postings.MustCurrency(currency)}
}

func authEventData(r *AuthResult) map[string]any {
	d := map[string]any{
		"approved": r.Approved, "code": r.Code, "reason": r.Reason, "cardNo": r.CardNo,
		"amount": money(r.Amount, r.Currency), "currency": r.Currency,
		"createdAt": r.CreatedAt.UTC().Format(time.RFC3339),
	}
	if r.AuthID != "" {
		d["authId"] = r.AuthID
	}
	if r.CardCurrency != "" {
		d["cardCurrency"] = r.CardCurrency
		d["cardAmount"] = money(r.CardAmount, r.CardCurrency)
		d["fee"] = money(r.Fee, r.CardCurrency)
		d["available"] = money(r.Available, r.CardCurrency)
	}
	if r.FXRate != "" {
		// A JSON number, written exactly, like every rate and amount of
		// the API (docs/api.md, "Decimals"); it was a string here alone.
		d["fxRate"] = json.Number(r.FXRate)
	}
	return d
}

func holdEventData(r *HoldResult) map[string]any {
	return map[string]any{
		"authId": r.AuthID, "cardNo": r.CardNo, "status": r.Status, "currency": r.Currency,
		"captured": money(r.Captured, r.Currency), "fee": money(r.Fee, r.Currency),
		"released": money(r.Released, r.Currency), "receivable": money(r.Receivable, r.Currency),
		"held": money(r.Held, r.Currency), "available": money(r.Available, r.Currency),
		"createdAt": r.CreatedAt.UTC().Format(time.RFC3339),
	}
}

func refundEventData(r *RefundResult) map[string]any {
	return map[string]any{
		"cardNo": r.CardNo, "amount": money(r.Amount, r.Currency), "currency": r.Currency,
		"credited": r.Credited, "available": money(r.Available, r.Currency),
		"createdAt": r.CreatedAt.UTC().Format(time.RFC3339),
	}
}

// cardExpired reports whether the card's expiry month has ended.
func cardExpired(c *cardRow, now time.Time) bool {
	end := time.Date(c.ExpiryYear, time.Month(c.ExpiryMonth)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(end)
}

// holdCmd runs fn on one authorization under its merchant's lock.
func (l *Ledger) holdCmd(ctx context.Context, messageID, authID, op string, content any,
	fn func(st *Tx, h *head, a *authState) (*HoldResult, error)) (*HoldResult, error) {
	idem, err := networkIdem(messageID)
	if err != nil {
		return nil, err
	}
	if !postings.IsRefText(authID) {
		return nil, postings.FieldErrorf("authId", "must be 1 to 64 characters of [A-Za-z0-9_.:-]")
	}
	var merchant int64
	err = l.db.NewRaw(`select merchant_id from authorizations where auth_id = ?`, authID).Scan(ctx, &merchant)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errAuthNotFound()
	}
	if err != nil {
		return nil, MapError(err)
	}
	cmd := &cardCmd{
		fn: func(st *Tx, h *head) (any, error) {
			if err := st.loadAuths([]string{authID}); err != nil {
				return nil, err
			}
			a, err := st.authOf(h.merchant.ID, authID)
			if err != nil {
				return nil, err
			}
			if err := st.loadCards([]string{a.row.CardNo}); err != nil {
				return nil, err
			}
			return fn(st, h, a)
		},
	}
	cmd.prefetchAuth = authID
	return submitCard[HoldResult](ctx, l, merchant, idem, map[string]any{"op": op, "req": content}, cmd)
}

func errHoldClosed(a *authRow) error {
	return postings.ReasonErrorf(postings.ESTATE, postings.ReasonAuthorizationClosed, "the authorization is %s", a.Status)
}

// holdOf is the arithmetic of an authorization's hold as it was approved:
// its amounts and the rate of the authorization (docs/network.md).
func holdOf(r *authRow) (postings.Hold, error) {
	h := postings.Hold{TxnAmount: r.TxnAmount, Amount: r.Amount, Fee: r.Fee}
	var err error
	if h.Txn, err = postings.LookupCurrency(r.TxnCurrency); err != nil {
		return h, Invariantf("authorization %s has currency %q", r.AuthID, r.TxnCurrency)
	}
	if h.Card, err = postings.LookupCurrency(r.Currency); err != nil {
		return h, Invariantf("authorization %s has currency %q", r.AuthID, r.Currency)
	}
	if r.TxnCurrency != r.Currency {
		if h.Rate, err = postings.ParseRate(r.FXRate.String); err != nil {
			return h, Invariantf("authorization %s has rate %q", r.AuthID, r.FXRate.String)
		}
	}
	return h, nil
}

// Clear captures an authorization: partially (the rest of the hold is
// released), exactly, or above the hold. A capture always succeeds on an
// open authorization, also on a frozen or cancelled card: what the hold
// does not cover comes from the card's available balance, and what that
// cannot cover is carried on the card's receivable (docs/network.md).
func (l *Ledger) Clear(ctx context.Context, req ClearRequest) (*HoldResult, error) {
	if req.Amount <= 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	return l.holdCmd(ctx, req.MessageID, req.AuthID, "clear", req, func(st *Tx, h *head, a *authState) (*HoldResult, error) {
		return st.clear(h, a, req)
	})
}

func (st *Tx) clear(h *head, a *authState, req ClearRequest) (*HoldResult, error) {
	r := &a.row
	if r.Status != AuthOpen {
		return nil, errHoldClosed(r)
	}
	if err := st.boundClear(r, req.Amount); err != nil {
		return nil, err
	}
	c := st.ext.cards[r.CardNo]
	if c == nil {
		return nil, Invariantf("authorization %s without its card", r.AuthID)
	}
	// The clearing takes its share of the hold as approved (rounded up: the
	// cardholder pays), all of what is open when it clears all of it, and
	// above that the excess at the authorization's rate (docs/network.md).
	hold, err := holdOf(r)
	if err != nil {
		return nil, err
	}
	part, err := hold.Capture(r.TxnReversed, req.Amount)
	if err != nil {
		return nil, err
	}
	capture, fee := part.Amount, part.Fee
	avail, held := cardAccounts(r.MerchantID, r.Currency, r.CardNo)
	recv := postings.CardAccount(r.MerchantID, postings.AccountCardReceivable, r.Currency, r.CardNo)
	availBal, err := st.PeekBalance(avail)
	if err != nil {
		return nil, err
	}
	res := &HoldResult{AuthID: r.AuthID, CardNo: r.CardNo, Currency: r.Currency, Captured: capture, Fee: fee, CreatedAt: st.now}
	// Take each charge from the hold first, then available, then the
	// receivable.
	remainingHold, remainingAvail := r.Held, availBal
	charge := func(amount int64, dst postings.Account) []postings.Posting {
		var ps []postings.Posting
		add := func(src postings.Account, n int64) {
			if n > 0 {
				ps = append(ps, postings.Posting{Source: src, Destination: dst, Amount: n, Currency: r.Currency})
			}
		}
		fromHold := min(amount, remainingHold)
		remainingHold -= fromHold
		fromAvail := min(amount-fromHold, remainingAvail)
		remainingAvail -= fromAvail
		fromRecv := amount - fromHold - fromAvail
		res.Receivable += fromRecv
		add(held, fromHold)
		add(avail, fromAvail)
		add(recv, fromRecv)
		return ps
	}
	settlement := postings.MerchantAccount(r.MerchantID, postings.AccountNetworkSettlement, r.Currency)
	refs := postings.Refs{CardNo: r.CardNo, AuthID: r.AuthID}
	// The clearing's message id and the network's amount travel with the
	// entry: settlement-file reconciliation matches on them.
	meta := map[string]string{"message_id": req.MessageID,
		"txn_amount": strconv.FormatInt(req.Amount, 10), "txn_currency": r.TxnCurrency}
	if _, err := st.Post(postings.Entry{Merchant: h.merchant.ID, Kind: postings.KindCardSettle, Refs: refs,
		Metadata: meta, Postings: charge(capture, settlement)}); err != nil {
		return nil, err
	}
	if fee > 0 {
		if _, err := st.Post(postings.Entry{Merchant: h.merchant.ID, Kind: postings.KindFee, Refs: refs,
			Metadata: map[string]string{"fee": "cross_border"},
			Postings: charge(fee, postings.MerchantAccount(r.MerchantID, postings.AccountFeeRevenue, r.Currency))}); err != nil {
			return nil, err
		}
	}
	if remainingHold > 0 {
		if err := st.releaseHold(h, c, r, remainingHold, postings.KindCardAuthRelease); err != nil {
			return nil, err
		}
		res.Released = remainingHold
	}
	st.changeAuth(a, func(r *authRow) {
		r.Captured = capture + fee
		r.Released += res.Released
		r.Held = 0
		r.Status = AuthCleared
	})
	return st.finishHold(h, a, res, EventAuthCleared)
}

// releaseHold moves amount from the card's hold back to its available
// balance, or to the funding account when the card is cancelled, repaying
// any receivable first.
func (st *Tx) releaseHold(h *head, c *cardState, r *authRow, amount int64, kind postings.Kind) error {
	_, held := cardAccounts(r.MerchantID, r.Currency, r.CardNo)
	ps, err := st.creditCard(c, held, amount)
	if err != nil {
		return err
	}
	_, err = st.Post(postings.Entry{Merchant: h.merchant.ID, Kind: kind,
		Refs: postings.Refs{CardNo: r.CardNo, AuthID: r.AuthID}, Postings: ps})
	return err
}

// creditCard returns the postings that credit amount from src to a card:
// its receivable first (what it owes), then its available balance, or the
// funding account of its currency once the card is cancelled.
func (st *Tx) creditCard(c *cardState, src postings.Account, amount int64) ([]postings.Posting, error) {
	r := &c.row
	avail, _ := cardAccounts(r.MerchantID, r.Currency, r.CardNo)
	recv := postings.CardAccount(r.MerchantID, postings.AccountCardReceivable, r.Currency, r.CardNo)
	owed, err := st.PeekBalance(recv)
	if err != nil {
		return nil, err
	}
	dst := avail
	if r.Status == CardCancelled {
		dst = postings.MerchantAccount(r.MerchantID, postings.AccountFunding, r.Currency)
	}
	var ps []postings.Posting
	if repay := min(amount, -owed); repay > 0 {
		ps = append(ps, postings.Posting{Source: src, Destination: recv, Amount: repay, Currency: r.Currency})
		amount -= repay
	}
	if amount > 0 {
		ps = append(ps, postings.Posting{Source: src, Destination: dst, Amount: amount, Currency: r.Currency})
	}
	return ps, nil
}

func (st *Tx) finishHold(h *head, a *authState, res *HoldResult, eventType string) (*HoldResult, error) {
	r := &a.row
	avail, _ := cardAccounts(r.MerchantID, r.Currency, r.CardNo)
	var err error
	if res.Available, err = st.PeekBalance(avail); err != nil {
		return nil, err
	}
	res.Status, res.Held = r.Status, r.Held
	return res, st.Emit(h.merchant.ID, Event{Type: eventType, Subject: r.CardNo, Data: holdEventData(res)})
}

// Reverse releases a hold, fully (Amount 0 or the whole open amount) or
// partly. Nothing is released twice: a closed authorization is refused, and
// a partial amount above what is still held is refused.
func (l *Ledger) Reverse(ctx context.Context, req ReverseRequest) (*HoldResult, error) {
	if req.Amount < 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be positive and at most the maximum amount")
	}
	return l.holdCmd(ctx, req.MessageID, req.AuthID, "reverse", req, func(st *Tx, h *head, a *authState) (*HoldResult, error) {
		return st.reverse(h, a, req.Amount)
	})
}

func (st *Tx) reverse(h *head, a *authState, txnAmount int64) (*HoldResult, error) {
	r := &a.row
	if r.Status != AuthOpen {
		return nil, errHoldClosed(r)
	}
	if err := st.boundMessage(r.TxnCurrency, txnAmount); err != nil {
		return nil, err
	}
	c := st.ext.cards[r.CardNo]
	res := &HoldResult{AuthID: r.AuthID, CardNo: r.CardNo, Currency: r.Currency, CreatedAt: st.now}
	// A reversal names an amount of the transaction's currency, or none for
	// all that is still open. It releases its share of the hold as
	// approved, principal and fee, rounded down (the card receives); the
	// reversal that reverses all that is open, explicitly or implied,
	// releases everything still held, fee included (docs/network.md).
	open := r.TxnAmount - r.TxnReversed
	if txnAmount == 0 {
		txnAmount = open
	}
	if txnAmount > open {
		return nil, postings.FieldErrorf("amount", "exceeds what the authorization still holds")
	}
	release := r.Held
	if txnAmount < open {
		hold, err := holdOf(r)
		if err != nil {
			return nil, err
		}
		part, err := hold.Reverse(r.TxnReversed, txnAmount)
		if err != nil {
			return nil, err
		}
		// Never more than is held: a hold reversed in part before its
		// transaction amount was tracked (sql/0008) may hold less.
		release = min(part.Total(), r.Held-1)
	}
	// A reversal too small to release a whole minor unit moves no money:
	// it is counted, and its unit goes back with a later message.
	if release > 0 {
		if err := st.releaseHold(h, c, r, release, postings.KindReversal); err != nil {
			return nil, err
		}
	}
	st.changeAuth(a, func(r *authRow) {
		r.TxnReversed += txnAmount
		r.Held -= release
		r.Released += release
		if r.TxnReversed == r.TxnAmount {
			r.Status = AuthReversed
		}
	})
	res.Released = release
	return st.finishHold(h, a, res, EventAuthReversed)
}

// Refund credits a card from the network: its available balance, or the
// funding account once the card is cancelled (CARD_REFUND).
func (l *Ledger) Refund(ctx context.Context, req RefundRequest) (*RefundResult, error) {
	idem, err := networkIdem(req.MessageID)
	if err != nil {
		return nil, err
	}
	if req.Amount <= 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	if !postings.IsRefText(req.CardNo) {
		return nil, errCardNotFound()
	}
	merchant, found, err := l.cardMerchant(ctx, req.CardNo)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errCardNotFound()
	}
	cmd := &cardCmd{
		cards: []string{req.CardNo},
		fn: func(st *Tx, h *head) (any, error) {
			c, err := st.cardOf(h.merchant.ID, req.CardNo)
			if err != nil {
				return nil, err
			}
			if req.Currency != c.row.Currency {
				return nil, postings.FieldErrorf("currency", "must be the card's currency, %s", c.row.Currency)
			}
			if err := st.boundRefund(c, req.Amount); err != nil {
				return nil, err
			}
			src := postings.MerchantAccount(h.merchant.ID, postings.AccountNetworkSettlement, c.row.Currency)
			ps, err := st.creditCard(c, src, req.Amount)
			if err != nil {
				return nil, err
			}
			if _, err := st.Post(postings.Entry{Merchant: h.merchant.ID, Kind: postings.KindCardRefund,
				Refs: postings.Refs{CardNo: c.row.CardNo}, Postings: ps}); err != nil {
				return nil, err
			}
			res := &RefundResult{CardNo: c.row.CardNo, Amount: req.Amount, Currency: c.row.Currency, Credited: "card", CreatedAt: st.now}
			if c.row.Status == CardCancelled {
				res.Credited = "funding"
			}
			avail, _ := cardAccounts(h.merchant.ID, c.row.Currency, c.row.CardNo)
			if res.Available, err = st.PeekBalance(avail); err != nil {
				return nil, err
			}
			return res, st.Emit(h.merchant.ID, Event{Type: EventCardRefund, Subject: c.row.CardNo, Data: refundEventData(res)})
		},
	}
	return submitCard[RefundResult](ctx, l, merchant, idem, map[string]any{"op": "refund", "req": req}, cmd)
}

// ExpireBatchMax bounds the holds one ExpireHolds call releases.
const ExpireBatchMax = 500

// ExpireHolds releases holds whose authorization was not cleared within the
// hold expiry (default 7 days), at most limit of them, and returns how many
// it released. Several workers may run it: each hold is released by one
// command under its merchant's lock, and one already closed is skipped.
func (l *Ledger) ExpireHolds(ctx context.Context, limit int) (int, error) {
	if limit <= 0 || limit > ExpireBatchMax {
		limit = ExpireBatchMax
	}
	var due []struct {
		AuthID     string `bun:"auth_id"`
		MerchantID int64  `bun:"merchant_id"`
	}
	err := l.db.NewRaw(`select auth_id, merchant_id from authorizations where status = 'OPEN' and expires_at <= ? order by expires_at limit ?`,
		l.now(), limit).Scan(ctx, &due)
	if err != nil {
		return 0, MapError(err)
	}
	n := 0
	for _, d := range due {
		authID := d.AuthID
		cmd := &cardCmd{prefetchAuth: authID, fn: func(st *Tx, h *head) (any, error) {
			a, err := st.authOf(h.merchant.ID, authID)
			if err != nil {
				return nil, err
			}
			if a.row.Status != AuthOpen || st.now.Before(a.row.ExpiresAt) {
				return &HoldResult{AuthID: authID, Status: a.row.Status}, nil // resolved meanwhile
			}
			if err := st.loadCards([]string{a.row.CardNo}); err != nil {
				return nil, err
			}
			release := a.row.Held
			if err := st.releaseHold(h, st.ext.cards[a.row.CardNo], &a.row, release, postings.KindCardAuthRelease); err != nil {
				return nil, err
			}
			st.changeAuth(a, func(r *authRow) {
				r.Released += release
				r.Held = 0
				r.Status = AuthExpired
			})
			return st.finishHold(h, a, &HoldResult{AuthID: authID, CardNo: a.row.CardNo, Currency: a.row.Currency,
				Released: release, CreatedAt: st.now}, EventAuthExpired)
		}}
		res, err := submitCard[HoldResult](ctx, l, d.MerchantID, nil, nil, cmd)
		if err != nil {
			return n, err
		}
		if res.Status == AuthExpired && res.Released > 0 {
			n++
		}
	}
	return n, nil
}
