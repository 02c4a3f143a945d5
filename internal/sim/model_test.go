package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The auditor model: what the ledger must hold after every step, computed in
// pure Go from the operations and their documented rules (docs/ledger.md,
// docs/cards.md, docs/network.md, docs/remittances.md). Balances are kept per
// account address, like the ledger's, so that every account can be compared.

type mMerchant struct {
	id     int64
	cur    string
	other  string // a currency the merchant does not have
	bin    string
	lim    cards.Limit
	seq    int64 // the expected length of its journal
	cards  []*mCard
	remits []*mRemit
	// network message ids already answered, for conflicting reuse
	netDone []netAnswer
	// Disabled mid-run (disabled_test.go), with the credentials its
	// refused /shop requests are sent under.
	disabled bool
	creds    *merchant.Credentials
}

// netAnswer is a network message id and when the ledger answered it: its
// key is kept for the ledger's idempotency TTL, after which the id may be
// used again.
type netAnswer struct {
	id string
	at time.Time
}

// netKeyFreshMax is how long ago an answered message id must have been
// answered for its reuse to be a conflict: well inside the ledger's TTL
// (48 hours by default, never less than 24).
const netKeyFreshMax = 20 * time.Hour

type mCard struct {
	m      *mMerchant
	no     string
	status string
	// What the network captured on the card and refunded to it: refunds
	// are bounded by the first plus simUnmatchedRefundMax.
	captured, refunded int64
}

// The network bounds of the simulation (docs/network.md, "Bounds"): a
// largest message low enough for the large authorizations and clearings to
// cross it, an unmatched-refund allowance small enough to be used up, and
// the default over-capture tolerance.
// Every transaction currency of the simulation has its largest message
// set, so that the model needs no rate to know it.
const (
	simUnmatchedRefundMax = 300_00
	simOverCaptureBps     = network.OverCaptureBpsDefault
)

var simMessageMax = map[string]int64{"USD": 8_000_00, "EUR": 8_000_00, "JPY": 1_000_000, "KWD": 2_500_000, "BHD": 3_000_000}

var simNetworkBounds = network.Bounds{
	MessageMax:         simMessageMax,
	UnmatchedRefundMax: map[string]int64{"USD": simUnmatchedRefundMax, "EUR": simUnmatchedRefundMax},
}

// overCaptured mirrors the tolerance: amount × 10⁴ > authorized × (10⁴ +
// bps), in integers small enough here not to overflow.
func overCaptured(amount, authorized int64) bool {
	return amount*10_000 > authorized*(10_000+simOverCaptureBps)
}

// mHold is an authorization: txn minor units of txnCur as the network sent
// them, held as cardAmt plus fee in the card's currency (converted once at
// rate), with what reversals have reversed so far (in txnCur) and what is
// still held, captured and released (in the card's currency).
type mHold struct {
	id                       string
	card                     *mCard
	txn                      int64
	txnCur                   string
	rate                     *big.Rat // nil in the card's currency
	cardAmt, fee             int64
	reversed                 int64
	held, captured, released int64
	status                   string
	expires                  time.Time
}

type mRemit struct {
	m           *mMerchant
	tx          string
	amount, fee int64
	status      string
}

type model struct {
	bal        map[string]int64 // by account address
	merchants  []*mMerchant
	holds      map[string]*mHold
	holdList   []*mHold
	remits     map[string]*mRemit
	cardsByNo  map[string]*mCard
	holdExpiry time.Duration
	rates      map[string]mRate // "EUR/USD" → the operator's rate
	ratesAt    time.Time
}

func newModel(holdExpiry time.Duration) *model {
	return &model{bal: map[string]int64{}, holds: map[string]*mHold{}, remits: map[string]*mRemit{},
		cardsByNo: map[string]*mCard{}, holdExpiry: holdExpiry}
}

func (md *model) get(a postings.Account) int64 { return md.bal[a.Address()] }

func (md *model) move(from, to postings.Account, amount int64) {
	if amount == 0 {
		return
	}
	md.bal[from.Address()] -= amount
	md.bal[to.Address()] += amount
}

// creditCard mirrors the ledger: what a card receives repays its receivable
// first, then goes to its available balance, or to the funding account once
// the card is cancelled. It returns what reached the funding account.
func (md *model) creditCard(c *mCard, src postings.Account, amount int64) (toFunding int64) {
	owed := md.get(recvOf(c))
	if repay := min(amount, -owed); repay > 0 {
		md.move(src, recvOf(c), repay)
		amount -= repay
	}
	if amount > 0 {
		dst := availOf(c)
		if c.status == cards.CardCancelled {
			dst, toFunding = fundOf(c.m), amount
		}
		md.move(src, dst, amount)
	}
	return toFunding
}

func fundOf(m *mMerchant) postings.Account {
	return postings.MerchantAccount(m.id, postings.AccountFunding, m.cur)
}
func acctOf(m *mMerchant, t postings.AccountType) postings.Account {
	return postings.MerchantAccount(m.id, t, m.cur)
}
func availOf(c *mCard) postings.Account {
	return postings.CardAccount(c.m.id, postings.AccountCardAvailable, c.m.cur, c.no)
}
func heldOf(c *mCard) postings.Account {
	return postings.CardAccount(c.m.id, postings.AccountCardHeld, c.m.cur, c.no)
}
func recvOf(c *mCard) postings.Account {
	return postings.CardAccount(c.m.id, postings.AccountCardReceivable, c.m.cur, c.no)
}

// op is one step of the workload: a call to the ledger, repeatable with the
// same idempotency key, and the check of its authoritative answer against
// the model, which also applies it.
type op struct {
	name    string
	m       *mMerchant // whose journal head the fault injection locks; nil: no faults
	cards   []*mCard   // cards whose state is read back after the step
	all     bool       // the step may touch every merchant
	key     string     // scope/merchant/key of the answer; "" without a key
	noStore bool       // the answer is not stored under the key (idempotency conflict)
	call    func(ctx context.Context) (any, error)
	expect  func(res any, err error) error
}

func wantOK(err error) error {
	if err != nil {
		return fmt.Errorf("failed with %v, want success", err)
	}
	return nil
}

func wantErr(err error, code postings.Code, reason postings.Reason) error {
	if err == nil {
		return fmt.Errorf("succeeded, want %s/%s", code, reason)
	}
	pe := postings.AsError(err)
	if pe.Code != code || (reason != "" && pe.Reason != reason) {
		return fmt.Errorf("failed with %v (%s/%s), want %s/%s", err, pe.Code, pe.Reason, code, reason)
	}
	return nil
}

func check(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// encodeAnswer is the comparable form of an answer: a replay must give the
// same bytes as the first answer.
func encodeAnswer(res any, err error) string {
	if err != nil {
		pe := postings.AsError(err)
		return fmt.Sprintf("error %s/%s/%s: %s", pe.Code, pe.Reason, pe.Field, pe.Message)
	}
	if rec, ok := res.(*postings.Record); ok {
		return fmt.Sprintf("record seq=%d hash=%x", rec.Seq, rec.Hash)
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		return "unencodable: " + merr.Error()
	}
	return string(b)
}

func answerKey(scope string, merchant int64, key string) string {
	return fmt.Sprintf("%s/%d/%s", scope, merchant, key)
}

// --- merchant and card operations -------------------------------------

func (s *sim) opDeposit(m *mMerchant) *op {
	amount := s.between(500_00, 20_000_00)
	key := s.newKey("dep")
	return &op{
		name: "deposit", m: m, key: answerKey(ledger.ScopeLedger, m.id, key),
		call: func(ctx context.Context) (any, error) {
			return s.l.Deposit(ctx, m.id, m.cur, amount, &ledger.Idempotency{Key: key})
		},
		expect: func(res any, err error) error {
			if err := wantOK(err); err != nil {
				return err
			}
			rec := res.(*postings.Record)
			m.seq++
			s.md.move(acctOf(m, postings.AccountWorld), fundOf(m), amount)
			return check(rec.Seq == m.seq && rec.Kind == postings.KindDeposit, "deposit record seq %d kind %s, want seq %d", rec.Seq, rec.Kind, m.seq)
		},
	}
}

func (s *sim) opCreateCard(m *mMerchant) *op {
	cur := m.cur
	if s.chance(5) {
		cur = m.other
	}
	var amount int64
	switch r := s.rng.IntN(100); {
	case r < 10:
		amount = 0
	case r < 20:
		amount = s.between(m.lim.CardBalanceMax-100, m.lim.CardBalanceMax+100_00) // around the limit
	default:
		amount = s.between(1, 1_500_00)
	}
	in := cards.CreateCardInput{Bin: m.bin, Currency: cur, Amount: amount, Remark: "sim"}
	key := s.newKey("card")
	return &op{
		name: "create card", m: m, key: answerKey(ledger.ScopeShop, m.id, key),
		call: func(ctx context.Context) (any, error) {
			return s.l.Cards.CreateCard(ctx, m.id, in, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: key})
		},
		expect: func(res any, err error) error {
			switch {
			case cur != m.cur:
				return wantErr(err, postings.EFORBIDDEN, "currency")
			case amount > m.lim.CardBalanceMax:
				return wantErr(err, postings.ELIMIT, "card_balance_max")
			case amount > s.md.get(fundOf(m)):
				return wantErr(err, postings.EINSUFFICIENT, "")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			card := res.(*cards.Card)
			if _, dup := s.md.cardsByNo[card.CardNo]; dup || !strings.HasPrefix(card.CardNo, "crd_") {
				return fmt.Errorf("card number %q is not new", card.CardNo)
			}
			c := &mCard{m: m, no: card.CardNo, status: cards.CardActive}
			m.cards = append(m.cards, c)
			s.md.cardsByNo[c.no] = c
			if amount > 0 {
				m.seq++
				s.md.move(fundOf(m), availOf(c), amount)
			}
			return check(card.Available == amount && card.Held == 0 && card.Status == cards.CardActive && card.Currency == m.cur,
				"created card %+v, want available %d", card, amount)
		},
	}
}

// pickCard returns a card of m, or (foreign) another merchant's card.
func (s *sim) pickCard(m *mMerchant) (c *mCard, foreign bool) {
	if s.chance(5) {
		for _, o := range s.md.merchants {
			if o != m && len(o.cards) > 0 {
				return o.cards[s.rng.IntN(len(o.cards))], true
			}
		}
	}
	return m.cards[s.rng.IntN(len(m.cards))], false
}

func (s *sim) opTransfer(m *mMerchant) *op {
	c, foreign := s.pickCard(m)
	dir := cards.DirectionIn
	if s.chance(45) {
		dir = cards.DirectionOut
	}
	var amount int64
	if s.chance(15) {
		amount = s.between(1_000_00, 8_000_00) // often too much
	} else {
		amount = s.between(1, 600_00)
	}
	in := cards.TransferInput{CardNo: c.no, Amount: amount, Currency: m.cur, Direction: dir}
	key := s.newKey("trf")
	o := &op{
		name: "transfer " + dir, m: m, key: answerKey(ledger.ScopeShop, m.id, key),
		call: func(ctx context.Context) (any, error) {
			return s.l.Cards.Transfer(ctx, m.id, in, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: key})
		},
	}
	if !foreign {
		o.cards = []*mCard{c}
	}
	o.expect = func(res any, err error) error {
		switch {
		case foreign:
			return wantErr(err, postings.ENOTFOUND, "card")
		case c.status == cards.CardCancelled:
			return wantErr(err, postings.ESTATE, "card_cancelled")
		case c.status == cards.CardFrozen && dir == cards.DirectionIn:
			return wantErr(err, postings.ESTATE, "card_frozen")
		}
		fund, avail := s.md.get(fundOf(m)), s.md.get(availOf(c))
		if dir == cards.DirectionIn {
			repay := max(0, min(amount, -s.md.get(recvOf(c))))
			switch {
			case amount > fund:
				return wantErr(err, postings.EINSUFFICIENT, "")
			case avail+amount-repay > m.lim.CardBalanceMax:
				return wantErr(err, postings.ELIMIT, "card_balance_max")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			s.md.creditCard(c, fundOf(m), amount)
		} else {
			if amount > avail {
				return wantErr(err, postings.EINSUFFICIENT, "")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			s.md.move(availOf(c), fundOf(m), amount)
		}
		m.seq++
		r := res.(*cards.TransferResult)
		return check(strings.HasPrefix(r.TxID, "trf_") && r.CardAmount == amount && r.CardBalance == s.md.get(availOf(c)) &&
			r.FundingBalance == s.md.get(fundOf(m)), "transfer answered %+v, model card %d funding %d",
			r, s.md.get(availOf(c)), s.md.get(fundOf(m)))
	}
	return o
}

func (s *sim) opFreeze(m *mMerchant, freeze bool) *op {
	c := m.cards[s.rng.IntN(len(m.cards))]
	key := s.newKey("frz")
	idem := &ledger.Idempotency{Scope: ledger.ScopeShop, Key: key}
	target, name := cards.CardFrozen, "freeze"
	if !freeze {
		target, name = cards.CardActive, "unfreeze"
	}
	return &op{
		name: name, m: m, cards: []*mCard{c}, key: answerKey(ledger.ScopeShop, m.id, key),
		call: func(ctx context.Context) (any, error) {
			if freeze {
				return s.l.Cards.FreezeCard(ctx, m.id, c.no, "sim", idem)
			}
			return s.l.Cards.UnfreezeCard(ctx, m.id, c.no, idem)
		},
		expect: func(res any, err error) error {
			if c.status == cards.CardCancelled {
				return wantErr(err, postings.ESTATE, "card_cancelled")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			c.status = target
			card := res.(*cards.Card)
			return check(card.Status == target && card.Available == s.md.get(availOf(c)) && card.Held == s.md.get(heldOf(c)),
				"%s answered %+v", name, card)
		},
	}
}

func (s *sim) opCancel(m *mMerchant) *op {
	c := m.cards[s.rng.IntN(len(m.cards))]
	key := s.newKey("cnl")
	return &op{
		name: "cancel", m: m, cards: []*mCard{c}, key: answerKey(ledger.ScopeShop, m.id, key),
		call: func(ctx context.Context) (any, error) {
			return s.l.Cards.CancelCard(ctx, m.id, c.no, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: key})
		},
		expect: func(res any, err error) error {
			if c.status == cards.CardCancelled {
				return wantErr(err, postings.ESTATE, "card_cancelled")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			bal := s.md.get(availOf(c))
			c.status = cards.CardCancelled
			refunded := int64(0)
			if bal > 0 {
				refunded = s.md.creditCard(c, availOf(c), bal)
				m.seq++
			}
			r := res.(*cards.CancelResult)
			return check(r.Refunded == refunded && r.Card.Status == cards.CardCancelled && r.Card.Available == 0,
				"cancel answered refunded %d status %s available %d, want refunded %d", r.Refunded, r.Card.Status, r.Card.Available, refunded)
		},
	}
}

// --- the network side ---------------------------------------------------

// netMsg is a network (or rail) message waiting in the simulated network,
// which delivers them in random order and sometimes twice.
type netMsg struct {
	kind string // authorize, clear, reverse, refund, rail
	id   string
	// firstAt is when the message was first delivered: a network or rail
	// resends a message within minutes or hours, never after the days that
	// the ledger keeps its id (the idempotency TTL).
	firstAt  time.Time
	card     *mCard
	hold     *mHold
	remit    *mRemit
	amount   int64
	currency string
	status   string // rail: SETTLED or RETURNED
}

func (s *sim) newNetMsg() (*netMsg, bool) {
	msg := &netMsg{id: s.newKey("net")}
	switch r := s.rng.IntN(100); {
	case r < 40 || len(s.md.holdList) == 0:
		c, ok := s.anyCard()
		if !ok {
			return nil, false
		}
		msg.kind, msg.card, msg.currency = "authorize", c, s.txnCurrencyFor(c.m)
		switch {
		case msg.currency == c.m.cur && s.chance(10):
			msg.amount = s.exhaustingAmount(c) // position_test.go
		case s.chance(15):
			msg.amount = s.between(1_000_00, 9_000_00)
		case s.chance(15):
			msg.amount = s.between(1, 30) // a few minor units: rounding bites
		default:
			msg.amount = s.between(1, 300_00)
		}
	case r < 65:
		h := s.pickHold()
		msg.kind, msg.hold, msg.card = "clear", h, h.card
		msg.amount = s.between(1, h.txn+h.txn/3+1) // partial, exact or above the hold
		// Now and then above a hold its card cannot pay: a receivable
		// (position_test.go).
		if s.chance(25) {
			h = s.emptyCardHold(h)
			msg.hold, msg.card, msg.amount = h, h.card, s.overCaptureAmount(h)
		}
	case r < 88:
		h := s.pickHold()
		msg.kind, msg.hold, msg.card = "reverse", h, h.card
		if s.chance(50) {
			open := h.txn - h.reversed
			msg.amount = s.between(1, open+open/5+1)
		}
	default:
		c, ok := s.anyCard()
		if !ok {
			return nil, false
		}
		msg.kind, msg.card, msg.amount, msg.currency = "refund", c, s.between(1, 200_00), c.m.cur
		if s.chance(5) {
			msg.currency = c.m.other
		}
	}
	return msg, true
}

func (s *sim) pickHold() *mHold {
	// Mostly the recent holds, which are more often open.
	n := len(s.md.holdList)
	if n > 8 && s.chance(70) {
		return s.md.holdList[n-1-s.rng.IntN(8)]
	}
	return s.md.holdList[s.rng.IntN(n)]
}

func (s *sim) anyCard() (*mCard, bool) {
	var all []*mCard
	for _, m := range s.md.merchants {
		all = append(all, m.cards...)
	}
	if len(all) == 0 {
		return nil, false
	}
	return all[s.rng.IntN(len(all))], true
}

// opNetwork turns a delivered message into an op.
func (s *sim) opNetwork(msg *netMsg) *op {
	switch msg.kind {
	case "authorize":
		return s.opAuthorize(msg)
	case "clear", "reverse":
		return s.opHold(msg)
	case "refund":
		return s.opRefund(msg)
	case "rail":
		return s.opRail(msg)
	}
	panic("unknown message " + msg.kind)
}

func (s *sim) opAuthorize(msg *netMsg) *op {
	c, m := msg.card, msg.card.m
	txnCur := msg.currency
	if txnCur == "" {
		txnCur = m.cur
	}
	req := network.AuthRequest{MessageID: msg.id, CardNo: c.no, Amount: msg.amount, Currency: txnCur,
		MerchantName: "Sim Shop", MCC: "5999", MerchantCountry: "US"}
	return &op{
		name: "authorize", m: m, cards: []*mCard{c}, key: answerKey(ledger.ScopeNetwork, m.id, msg.id),
		call: func(ctx context.Context) (any, error) { return s.l.Network.Authorize(ctx, req) },
		expect: func(res any, err error) error {
			if err := wantOK(err); err != nil {
				return err
			}
			r := res.(*network.AuthResult)
			m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
			avail := s.md.get(availOf(c))
			code, cardAmt, fee, rate := s.authDecision(c, msg.amount, txnCur)
			if code != network.RespApproved {
				return check(!r.Approved && r.Code == code && r.AuthID == "" && r.Available == avail,
					"authorization of %d %s answered %+v, want decline %s with available %d", msg.amount, txnCur, r, code, avail)
			}
			if _, dup := s.md.holds[r.AuthID]; dup || !r.Approved || r.Code != code || !strings.HasPrefix(r.AuthID, "auth_") {
				return fmt.Errorf("authorization answered %+v, want a new approval", r)
			}
			if r.CardAmount != cardAmt || r.Fee != fee || r.FXRate != rate.text {
				return fmt.Errorf("authorization of %d %s on a %s card answered card amount %d fee %d rate %q; the model: %d, %d, %q",
					msg.amount, txnCur, m.cur, r.CardAmount, r.Fee, r.FXRate, cardAmt, fee, rate.text)
			}
			s.md.move(availOf(c), heldOf(c), cardAmt+fee)
			m.seq++
			h := &mHold{id: r.AuthID, card: c, txn: msg.amount, txnCur: txnCur, rate: rate.rat, cardAmt: cardAmt, fee: fee,
				held: cardAmt + fee, status: network.AuthOpen, expires: s.nowUTC().Add(s.md.holdExpiry)}
			s.md.holds[h.id] = h
			s.md.holdList = append(s.md.holdList, h)
			if txnCur != m.cur {
				s.stats["authorizations across currencies"]++
			}
			if s.chance(30) || (txnCur != m.cur && s.chance(50)) {
				s.planSequence(h)
			}
			return check(r.Available == s.md.get(availOf(c)), "authorization left available %d, model %d", r.Available, s.md.get(availOf(c)))
		},
	}
}

func (s *sim) opHold(msg *netMsg) *op {
	h, c, m := msg.hold, msg.card, msg.card.m
	o := &op{name: msg.kind, m: m, cards: []*mCard{c}, key: answerKey(ledger.ScopeNetwork, m.id, msg.id)}
	if msg.kind == "clear" {
		req := network.ClearRequest{MessageID: msg.id, AuthID: h.id, Amount: msg.amount}
		o.call = func(ctx context.Context) (any, error) { return s.l.Network.Clear(ctx, req) }
	} else {
		req := network.ReverseRequest{MessageID: msg.id, AuthID: h.id, Amount: msg.amount}
		o.call = func(ctx context.Context) (any, error) { return s.l.Network.Reverse(ctx, req) }
	}
	o.expect = func(res any, err error) error {
		if h.status != network.AuthOpen {
			if err := wantErr(err, postings.ESTATE, "authorization_closed"); err != nil {
				return err
			}
			m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
			return nil
		}
		if msg.kind == "clear" {
			return s.expectClear(msg, h, res, err)
		}
		return s.expectReverse(msg, h, res, err)
	}
	return o
}

func (s *sim) expectClear(msg *netMsg, h *mHold, res any, err error) error {
	c, m := h.card, h.card.m
	switch {
	case msg.amount > simMessageMax[h.txnCur]:
		m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
		s.stats["bound: clearing above the largest message"]++
		return wantErr(err, postings.ELIMIT, "network_message_max")
	case overCaptured(msg.amount, h.txn):
		m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
		s.stats["bound: over-capture refused"]++
		return wantErr(err, postings.ELIMIT, "over_capture")
	}
	if err := wantOK(err); err != nil {
		return err
	}
	m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
	capture, fee := h.capture(msg.amount)
	c.captured += capture + fee
	// Each charge comes from the hold first, then the card's available
	// balance, then its receivable; what the hold keeps is released.
	held, receivable := h.held, int64(0)
	charge := func(amount int64, dst postings.Account) {
		fromHold := min(amount, held)
		fromAvail := min(amount-fromHold, s.md.get(availOf(c)))
		fromRecv := amount - fromHold - fromAvail
		s.md.move(heldOf(c), dst, fromHold)
		s.md.move(availOf(c), dst, fromAvail)
		s.md.move(recvOf(c), dst, fromRecv)
		held -= fromHold
		receivable += fromRecv
		m.seq++
	}
	charge(capture, acctOf(m, postings.AccountNetworkSettlement))
	if fee > 0 {
		charge(fee, acctOf(m, postings.AccountFeeRevenue))
	}
	if receivable > 0 {
		s.stats["over-captures into a receivable"]++
	}
	released := held
	if released > 0 {
		s.md.creditCard(c, heldOf(c), released)
		m.seq++
	}
	if msg.amount == h.txn-h.reversed && released != 0 {
		return fmt.Errorf("the model released %d clearing exactly what is open of %+v", released, h)
	}
	h.captured, h.released, h.held, h.status = capture+fee, h.released+released, 0, network.AuthCleared
	r := res.(*network.HoldResult)
	return check(r.Captured == capture && r.Fee == fee && r.Released == released && r.Receivable == receivable && r.Held == 0 &&
		r.Status == network.AuthCleared && r.Available == s.md.get(availOf(c)),
		"clear of %d %s answered %+v, want captured %d fee %d released %d receivable %d available %d",
		msg.amount, h.txnCur, r, capture, fee, released, receivable, s.md.get(availOf(c)))
}

func (s *sim) expectReverse(msg *netMsg, h *mHold, res any, err error) error {
	if msg.amount > simMessageMax[h.txnCur] {
		h.card.m.netDone = append(h.card.m.netDone, netAnswer{msg.id, s.nowUTC()})
		s.stats["bound: reversal above the largest message"]++
		return wantErr(err, postings.ELIMIT, "network_message_max")
	}
	open := h.txn - h.reversed
	txn := msg.amount
	if txn == 0 {
		txn = open
	}
	if txn > open {
		if err := wantErr(err, postings.EINVALID, ""); err != nil {
			return err
		}
		h.card.m.netDone = append(h.card.m.netDone, netAnswer{msg.id, s.nowUTC()})
		return nil
	}
	if err := wantOK(err); err != nil {
		return err
	}
	c, m := h.card, h.card.m
	m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
	// The share of what this reversal brings the total to, less the share
	// already released, each rounded down; all that is held when it
	// reverses all that is open.
	release := h.held
	if txn < open {
		a0, f0 := h.reversedShare(h.reversed)
		a1, f1 := h.reversedShare(h.reversed + txn)
		release = a1 - a0 + f1 - f0
	}
	if release > 0 {
		s.md.creditCard(c, heldOf(c), release)
		m.seq++
	} else {
		s.stats["reversals too small to release a unit"]++
	}
	h.reversed += txn
	h.held -= release
	h.released += release
	if h.reversed == h.txn {
		h.status = network.AuthReversed
		// The whole hold is released: amount and fee, nothing left.
		if h.held != 0 || h.released != h.cardAmt+h.fee {
			return fmt.Errorf("the model left %d held after reversing all of %+v", h.held, h)
		}
		s.stats["holds reversed whole"]++
	}
	r := res.(*network.HoldResult)
	return check(r.Released == release && r.Held == h.held && r.Status == h.status && r.Available == s.md.get(availOf(c)),
		"reverse of %d %s answered %+v, want released %d held %d status %s available %d",
		msg.amount, h.txnCur, r, release, h.held, h.status, s.md.get(availOf(c)))
}

func (s *sim) opRefund(msg *netMsg) *op {
	c, m := msg.card, msg.card.m
	req := network.RefundRequest{MessageID: msg.id, CardNo: c.no, Amount: msg.amount, Currency: msg.currency}
	return &op{
		name: "refund", m: m, cards: []*mCard{c}, key: answerKey(ledger.ScopeNetwork, m.id, msg.id),
		call: func(ctx context.Context) (any, error) { return s.l.Network.Refund(ctx, req) },
		expect: func(res any, err error) error {
			m.netDone = append(m.netDone, netAnswer{msg.id, s.nowUTC()})
			if msg.currency != m.cur {
				return wantErr(err, postings.EINVALID, "")
			}
			if msg.amount > c.captured+simUnmatchedRefundMax-c.refunded {
				s.stats["bound: unmatched refund refused"]++
				return wantErr(err, postings.ELIMIT, "refund_unmatched")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			c.refunded += msg.amount
			credited := "card"
			if c.status == cards.CardCancelled {
				credited = "funding"
			}
			s.md.creditCard(c, acctOf(m, postings.AccountNetworkSettlement), msg.amount)
			m.seq++
			r := res.(*network.RefundResult)
			return check(r.Credited == credited && r.Amount == msg.amount && r.Available == s.md.get(availOf(c)),
				"refund answered %+v, want credited %s available %d", r, credited, s.md.get(availOf(c)))
		},
	}
}

// opConflict reuses an answered network message id of m for a different
// message: the ledger must refuse it (idempotency_mismatch) and change
// nothing.
func (s *sim) opConflict(m *mMerchant) *op {
	var fresh []string
	for _, a := range m.netDone {
		if s.nowUTC().Sub(a.at) < netKeyFreshMax {
			fresh = append(fresh, a.id)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	id := fresh[s.rng.IntN(len(fresh))]
	c := m.cards[s.rng.IntN(len(m.cards))]
	req := network.RefundRequest{MessageID: id, CardNo: c.no, Amount: s.between(1, 50_00) + 7_777_777, Currency: m.cur}
	return &op{
		name: "conflicting message id", m: m, cards: []*mCard{c}, noStore: true,
		call: func(ctx context.Context) (any, error) { return s.l.Network.Refund(ctx, req) },
		expect: func(_ any, err error) error {
			return wantErr(err, postings.ECONFLICT, "idempotency_mismatch")
		},
	}
}

func (s *sim) opExpire() *op {
	return &op{
		name: "expire holds", all: true,
		call: func(ctx context.Context) (any, error) { return s.l.Network.ExpireHolds(ctx, network.ExpireBatchMax) },
		expect: func(res any, err error) error {
			if err := wantOK(err); err != nil {
				return err
			}
			now := s.nowUTC()
			want := 0
			for _, h := range s.md.holdList {
				if h.status != network.AuthOpen || now.Before(h.expires) {
					continue
				}
				s.md.creditCard(h.card, heldOf(h.card), h.held)
				h.card.m.seq++
				h.released += h.held
				h.held, h.status = 0, network.AuthExpired
				want++
				s.stats["holds expired"]++
			}
			return check(res.(int) == want, "ExpireHolds released %d holds, want %d", res.(int), want)
		},
	}
}

// --- remittances --------------------------------------------------------

var remitNext = map[string][]string{
	remittance.RemitSubmitted: {remittance.RemitScreening},
	remittance.RemitScreening: {remittance.RemitInFlight, remittance.RemitRejected},
	remittance.RemitInFlight:  {remittance.RemitSettled, remittance.RemitReturned},
}

var remitStatuses = []string{remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitInFlight,
	remittance.RemitSettled, remittance.RemitReturned, remittance.RemitRejected}

func allowed(from, to string) bool {
	for _, s := range remitNext[from] {
		if s == to {
			return true
		}
	}
	return false
}

func (s *sim) opRemit(m *mMerchant) *op {
	var amount int64
	if s.chance(10) {
		amount = s.between(m.lim.RemittanceMax-50_00, m.lim.RemittanceMax+50_00)
	} else {
		amount = s.between(1_00, 2_000_00)
	}
	fee := int64(0)
	if s.chance(80) {
		fee = s.between(1, 15_00)
	}
	s.checkCallbackClass()
	benef, _ := json.Marshal(map[string]string{"name": s.remitName(), "country": "DE",
		"bank_swift": "COBADEFFXXX", "account_no": fmt.Sprintf("DE%020d", s.rng.Int64N(1e18))})
	in := remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: benef, Amount: amount, Fee: fee,
		Currency: m.cur, Purpose: "SUPP", Rail: "SWIFT"}
	key := s.newKey("rmt")
	return &op{
		name: "create remittance", m: m, key: answerKey(ledger.ScopeShop, m.id, key),
		call: func(ctx context.Context) (any, error) {
			return s.l.Remit.CreateRemittance(ctx, m.id, in, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: key})
		},
		expect: func(res any, err error) error {
			switch {
			case amount > m.lim.RemittanceMax:
				return wantErr(err, postings.ELIMIT, "remittance_max")
			case amount+fee > s.md.get(fundOf(m)):
				return wantErr(err, postings.EINSUFFICIENT, "")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			r := res.(*remittance.Remittance)
			if _, dup := s.md.remits[r.TxID]; dup || r.Status != remittance.RemitSubmitted {
				return fmt.Errorf("remittance answered %+v, want a new SUBMITTED one", r)
			}
			rm := &mRemit{m: m, tx: r.TxID, amount: amount, fee: fee, status: remittance.RemitSubmitted}
			s.md.remits[rm.tx] = rm
			m.remits = append(m.remits, rm)
			s.md.move(fundOf(m), acctOf(m, postings.AccountRemitInFlight), amount)
			m.seq++
			if fee > 0 {
				s.md.move(fundOf(m), acctOf(m, postings.AccountFeeRevenue), fee)
				m.seq++
			}
			return nil
		},
	}
}

// applyRemit moves the model's remittance to status `to`.
func (s *sim) applyRemit(rm *mRemit, to string) {
	m := rm.m
	inFlight := acctOf(m, postings.AccountRemitInFlight)
	switch to {
	case remittance.RemitSettled:
		s.md.move(inFlight, acctOf(m, postings.AccountRailSettlement), rm.amount)
		m.seq++
	case remittance.RemitReturned:
		s.md.move(inFlight, fundOf(m), rm.amount)
		m.seq++
	case remittance.RemitRejected:
		s.md.move(inFlight, fundOf(m), rm.amount)
		m.seq++
		if rm.fee > 0 {
			s.md.move(acctOf(m, postings.AccountFeeRevenue), fundOf(m), rm.fee)
			m.seq++
		}
	}
	rm.status = to
}

func (s *sim) opTransition(m *mMerchant) *op {
	rm := m.remits[s.rng.IntN(len(m.remits))]
	foreign := false
	if s.chance(4) {
		for _, o := range s.md.merchants {
			if o != m && len(o.remits) > 0 {
				rm, foreign = o.remits[s.rng.IntN(len(o.remits))], true
				break
			}
		}
	}
	to := remitStatuses[1+s.rng.IntN(len(remitStatuses)-1)]
	if next := remitNext[rm.status]; len(next) > 0 && s.chance(70) {
		to = next[s.rng.IntN(len(next))]
	}
	from := rm.status
	switch r := s.rng.IntN(100); {
	case r < 10:
		from = ""
	case r < 20:
		from = remitStatuses[s.rng.IntN(len(remitStatuses))]
	}
	t := remittance.RemittanceTransition{TxID: rm.tx, From: from, To: to, Reason: "AC01 sim", NextActionAt: s.nowUTC()}
	key := s.newKey("step")
	type answer struct {
		Remittance *remittance.Remittance
		Moved      bool
	}
	return &op{
		name: "remittance " + to, m: m, key: answerKey(ledger.ScopeLedger, m.id, key),
		call: func(ctx context.Context) (any, error) {
			r, moved, err := s.l.Remit.TransitionRemittance(ctx, m.id, t, &ledger.Idempotency{Scope: ledger.ScopeLedger, Key: key})
			return &answer{r, moved}, err
		},
		expect: func(res any, err error) error {
			switch {
			case foreign:
				return wantErr(err, postings.ENOTFOUND, "remittance")
			case from != "" && from != rm.status:
				if err := wantOK(err); err != nil {
					return err
				}
				a := res.(*answer)
				return check(!a.Moved && a.Remittance.Status == rm.status, "stale step answered moved=%v status %s, want unmoved %s",
					a.Moved, a.Remittance.Status, rm.status)
			case !allowed(rm.status, to):
				return wantErr(err, postings.ESTATE, "remittance_state")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			s.applyRemit(rm, to)
			a := res.(*answer)
			return check(a.Moved && a.Remittance.Status == to, "step answered moved=%v status %s, want %s", a.Moved, a.Remittance.Status, to)
		},
	}
}

func (s *sim) newRailMsg() (*netMsg, bool) {
	if len(s.md.remits) == 0 {
		return nil, false
	}
	var list []*mRemit
	for _, m := range s.md.merchants {
		list = append(list, m.remits...)
	}
	rm := list[s.rng.IntN(len(list))]
	status := remittance.RemitSettled
	if s.chance(40) {
		status = remittance.RemitReturned
	}
	return &netMsg{kind: "rail", id: s.newKey("rail"), remit: rm, status: status}, true
}

func (s *sim) opRail(msg *netMsg) *op {
	rm := msg.remit
	return &op{
		name: "rail " + msg.status, m: rm.m, key: answerKey(ledger.ScopeRail, rm.m.id, msg.id),
		call: func(ctx context.Context) (any, error) {
			return s.l.Remit.ReportRemittance(ctx, msg.id, rm.tx, msg.status, "AC01")
		},
		expect: func(res any, err error) error {
			if !allowed(rm.status, msg.status) {
				return wantErr(err, postings.ESTATE, "remittance_state")
			}
			if err := wantOK(err); err != nil {
				return err
			}
			s.applyRemit(rm, msg.status)
			r := res.(*remittance.Remittance)
			return check(r.Status == msg.status, "rail report answered status %s, want %s", r.Status, msg.status)
		},
	}
}
