package network

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

func errAuthNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonAuthorization, "authorization not found")
}

// idempotency is the idempotency of a network message: the message id,
// with the kind of message in the fingerprint, so that one id reused for
// another message is a conflict.
func idempotency(messageID string) (*ledger.Idempotency, error) {
	if !postings.IsRefText(messageID) {
		return nil, postings.FieldErrorf("messageId", "must be 1 to 64 characters of [A-Za-z0-9_.:-]")
	}
	return &ledger.Idempotency{Scope: ledger.ScopeNetwork, Key: messageID}, nil
}

// Authorize decides an authorization in real time.
func (s *Service) Authorize(ctx context.Context, req AuthRequest) (*AuthResult, error) {
	idem, err := idempotency(req.MessageID)
	if err != nil {
		return nil, err
	}
	if req.Amount <= 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	merchant, found := int64(0), false
	if postings.IsRefText(req.CardNo) {
		if merchant, found, err = s.cards.MerchantOf(ctx, req.CardNo); err != nil {
			return nil, err
		}
	}
	if !found {
		return s.declineUnknownCard(ctx, req)
	}
	cmd := &ledger.Func[AuthResult]{
		Merchant: merchant,
		Want:     func(tx *ledger.Tx) { cards.WantCard(tx, req.CardNo) },
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*AuthResult, error) {
			return s.authorize(tx, m, req)
		},
	}
	return ledger.Do(ctx, s.l, idem, map[string]any{"op": "authorize", "req": req}, cmd)
}

// declineUnknownCard records a decline 14 for a card no merchant has. With
// no merchant there is no head to lock: the attempt's unique message id
// makes a repeat answer the same.
func (s *Service) declineUnknownCard(ctx context.Context, req AuthRequest) (*AuthResult, error) {
	now := s.l.Now()
	res := &AuthResult{Code: RespUnknownCard, Reason: "unknown card", CardNo: truncateRef(req.CardNo),
		Amount: req.Amount, Currency: req.Currency, CreatedAt: now}
	_, err := s.l.DB().NewInsert().Model(&authAttemptRow{
		MessageID: req.MessageID, CardNo: res.CardNo, TxnAmount: req.Amount, TxnCurrency: req.Currency,
		ResponseCode: RespUnknownCard, Reason: res.Reason, MerchantName: database.NullString(req.MerchantName),
		MCC: database.NullString(req.MCC), MerchantCountry: database.NullString(req.MerchantCountry), CreatedAt: now,
	}).On("CONFLICT (message_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return res, nil
}

// merchantDisabledReason is the recorded reason of an authorization on a
// disabled merchant's card.
const merchantDisabledReason = "do not honour: the card's merchant is disabled"

func truncateRef(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

func (s *Service) authorize(tx *ledger.Tx, m *ledger.Merchant, req AuthRequest) (*AuthResult, error) {
	now := tx.Now()
	res := &AuthResult{CardNo: req.CardNo, Amount: req.Amount, Currency: req.Currency, CreatedAt: now}
	c, err := cards.CardOf(tx, m.ID, req.CardNo)
	if err != nil {
		return nil, err
	}
	cardCur := c.Currency()
	res.CardCurrency = cardCur
	avail, held := cards.AvailableAccount(m.ID, cardCur, c.No()), cards.HeldAccount(m.ID, cardCur, c.No())
	if res.Available, err = tx.PeekBalance(avail); err != nil {
		return nil, err
	}
	decline := func(code, reason string) (*AuthResult, error) {
		res.Code, res.Reason = code, reason
		return res, recordAttempt(tx, m, req, res)
	}
	switch {
	case !c.MerchantActive():
		// The merchant is the card programme: a disabled one's cards are
		// declined as an issuer declines a suspended programme's, with
		// 05 and nothing about why to the acceptor (docs/network.md).
		return decline(RespDoNotHonour, merchantDisabledReason)
	case c.Status() == cards.CardCancelled:
		return decline(RespCancelled, "card cancelled")
	case c.Status() == cards.CardFrozen:
		return decline(RespNotPermitted, "card frozen: transaction not permitted")
	case c.Expired(now):
		return decline(RespExpired, "card expired")
	}
	if code, reason, magic := MagicDecline(req.Amount, req.Currency); magic {
		if test, err := IsTestMerchant(tx, m.ID); err != nil {
			return nil, err
		} else if test {
			return decline(code, reason)
		}
	}
	if maxMinor, err := s.messageMax(tx, req.Currency); err != nil {
		return nil, err
	} else if req.Amount > maxMinor {
		return decline(RespInvalidAmount, "invalid amount: above the largest network message in "+req.Currency)
	}
	// Convert at the operator's mid rate (the cross-border fee is the
	// price of conversion; no spread on top): postings.NewHold rounds the
	// amount and the fee up, the cardholder pays. Later messages take
	// shares of this hold and never convert again.
	cur := postings.MustCurrency(cardCur)
	var hold postings.Hold
	var meta map[string]string // the conversion's facts, hashed with the entry (docs/audit.md)
	if req.Currency == cardCur {
		if hold, err = postings.NewHold(req.Amount, cur, cur, postings.Rate{}); err != nil {
			return nil, err
		}
	} else {
		from, err := postings.LookupCurrency(req.Currency)
		if err != nil {
			return decline(RespDoNotHonour, "unsupported transaction currency")
		}
		rate, err := s.fx.Current(tx, req.Currency, cardCur)
		if err != nil {
			return decline(RespDoNotHonour, "no current exchange rate for "+req.Currency+"/"+cardCur)
		}
		if hold, err = postings.NewHold(req.Amount, from, cur, rate.Mid); err != nil {
			return decline(RespDoNotHonour, "amount cannot be converted")
		}
		res.FXRate = rate.MidRate
		fxf, fee := hold.Facts(rate.Version, rate.UpdatedAt)
		meta = postings.PutFacts(nil, &fxf, &fee)
	}
	res.CardAmount, res.Fee = hold.Amount, hold.Fee
	lim, err := cards.LimitOf(tx, m, cardCur)
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
	res.AuthID = database.CellID("auth_", s.cfg.Cell)
	if _, err := tx.Post(authEntry(m.ID, c.No(), res.AuthID, avail, held, res.CardAmount, res.Fee, cardCur, meta)); err != nil {
		return nil, err
	}
	batchOf.Of(tx).addAuth(tx, authRow{
		AuthID: res.AuthID, MerchantID: m.ID, CardNo: c.No(), MessageID: req.MessageID,
		TxnAmount: req.Amount, TxnCurrency: req.Currency, FXRate: database.NullString(res.FXRate),
		Amount: res.CardAmount, Fee: res.Fee, Currency: cardCur, Held: total, Status: AuthOpen,
		MerchantName: database.NullString(req.MerchantName), MCC: database.NullString(req.MCC),
		MerchantCountry: database.NullString(req.MerchantCountry),
		ExpiresAt:       now.Add(s.cfg.HoldExpiry), CreatedAt: now, UpdatedAt: now,
	})
	res.Approved, res.Code, res.Reason = true, RespApproved, "approved"
	res.Available -= total
	return res, recordAttempt(tx, m, req, res)
}

// recordAttempt keeps the attempt and its outbox event.
func recordAttempt(tx *ledger.Tx, m *ledger.Merchant, req AuthRequest, res *AuthResult) error {
	batchOf.Of(tx).addAttempt(tx, authAttemptRow{
		MessageID: req.MessageID, MerchantID: sql.NullInt64{Int64: m.ID, Valid: true}, CardNo: req.CardNo,
		TxnAmount: req.Amount, TxnCurrency: req.Currency, Approved: res.Approved, ResponseCode: res.Code,
		Reason: res.Reason, AuthID: database.NullString(res.AuthID), MerchantName: database.NullString(req.MerchantName),
		MCC: database.NullString(req.MCC), MerchantCountry: database.NullString(req.MerchantCountry), CreatedAt: tx.Now(),
	})
	typ := EventAuthDeclined
	if res.Approved {
		typ = EventAuthApproved
	}
	return tx.Emit(m.ID, ledger.Event{Type: typ, Subject: req.CardNo, Data: authEventData(res)})
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

// authEntry is an approved authorization's CARD_AUTH: the amount and the
// cross-border fee each move from the card's available balance to its hold
// as a posting of their own, the fee's named in the entry's metadata
// (postings.MetaFeePosting), so that the bill shows the fee as a FEE line
// of this movement instead of folding it into the CARD_AUTH amount
// (issue 29, point 2; docs/finance.md).
func authEntry(merchant int64, cardNo, authID string, avail, held postings.Account, amount, fee int64, cur string, meta map[string]string) postings.Entry {
	e := postings.Entry{Merchant: merchant, Kind: postings.KindCardAuth,
		Refs:     postings.Refs{CardNo: cardNo, AuthID: authID},
		Metadata: meta, // the conversion's and the fee's facts, when any (docs/audit.md)
		Postings: []postings.Posting{{Source: avail, Destination: held, Amount: amount, Currency: cur}},
	}
	if fee > 0 {
		if e.Metadata == nil {
			e.Metadata = map[string]string{}
		}
		e.Metadata[postings.MetaFeePosting] = "1"
		e.Postings = append(e.Postings, postings.Posting{Source: avail, Destination: held, Amount: fee, Currency: cur})
	}
	return e
}
