package ledger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/paygate/gateway/postings"
)

// cardCmd is a writer command of the card domain: it runs fn under the
// merchant's head lock, and replays a stored result by decoding it into a
// fresh value from newResult.
type cardCmd struct {
	merchant     int64
	cards        []string           // prefetched card rows
	prefetchAuth string             // a prefetched authorization
	accounts     []postings.Account // prefetched accounts
	bin          *binKey            // a prefetched BIN access and issuing counter
	loadCurrency string             // a prefetched card-load counter of today
	fn           func(st *Tx, h *head) (any, error)
	newResult    func() any
}

func (c *cardCmd) MerchantID() int64 { return c.merchant }

func (c *cardCmd) Prefetch(tx *Tx) {
	p := &tx.extWant
	for _, no := range c.cards {
		p.card(no)
	}
	if c.prefetchAuth != "" {
		p.auth(c.prefetchAuth)
	}
	for _, a := range c.accounts {
		tx.WantAccount(a)
	}
	if c.bin != nil {
		p.bins = append(p.bins, *c.bin)
	}
	if c.loadCurrency != "" {
		p.loads = append(p.loads, issueKey{merchant: c.merchant, currency: c.loadCurrency})
	}
}

func (c *cardCmd) Execute(st *Tx) (any, error) {
	h, err := st.head(c.merchant)
	if err != nil {
		return nil, err
	}
	return c.fn(st, h)
}

func (c *cardCmd) Replay(_ *Tx, stored []byte) (any, error) {
	v := c.newResult()
	if err := json.Unmarshal(stored, v); err != nil {
		return nil, fmt.Errorf("ledger: stored idempotent result: %w", err)
	}
	return v, nil
}

// submitCard runs a card command and returns its typed result.
func submitCard[T any](ctx context.Context, l *Ledger, merchant int64, idem *Idempotency, content any, c *cardCmd) (*T, error) {
	k, err := newIdemKey(merchant, idem, func() [32]byte {
		b, _ := json.Marshal(content)
		return sha256.Sum256(b)
	})
	if err != nil {
		return nil, err
	}
	c.merchant = merchant
	c.newResult = func() any { return new(T) }
	v, err := l.w.submit(ctx, c, k)
	if err != nil {
		return nil, err
	}
	return v.(*T), nil
}

func errCardNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonCard, "card not found")
}

func cardAccounts(merchant int64, cur, cardNo string) (avail, held postings.Account) {
	return postings.CardAccount(merchant, postings.AccountCardAvailable, cur, cardNo),
		postings.CardAccount(merchant, postings.AccountCardHeld, cur, cardNo)
}

func (l *Ledger) createCard(ctx context.Context, merchant int64, in CreateCardInput, idem *Idempotency) (*Card, error) {
	if in.Amount < 0 || in.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be between 0 and the maximum amount")
	}
	if l.cfg.Sealer == nil {
		return nil, fmt.Errorf("ledger: no data key configured")
	}
	return submitCard[Card](ctx, l, merchant, idem, in, createCardCmd(merchant, in))
}

// createCardCmd is a card creation. Its batch reads the funding account, the
// BIN access and today's issuing counter with the head lock; createCard
// would read the last two on demand otherwise (a round trip each).
func createCardCmd(merchant int64, in CreateCardInput) *cardCmd {
	return &cardCmd{
		accounts: []postings.Account{postings.MerchantAccount(merchant, postings.AccountFunding, in.Currency)},
		bin:      &binKey{merchant: merchant, bin: in.Bin, currency: in.Currency},
		fn: func(st *Tx, h *head) (any, error) {
			return st.createCard(h, in)
		},
	}
}

func (st *Tx) createCard(h *head, in CreateCardInput) (*Card, error) {
	m := &h.merchant
	if !m.HasCurrency(in.Currency) {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonCurrency, "%s is not one of the merchant's currencies", in.Currency)
	}
	bin, err := st.binFor(m, in.Bin, in.Currency)
	if err != nil {
		return nil, err
	}
	lim, err := st.limit(m, in.Currency)
	if err != nil {
		return nil, err
	}
	cur := postings.MustCurrency(in.Currency)
	if in.Amount > lim.CardBalanceMax {
		return nil, postings.ReasonErrorf(postings.ELIMIT, postings.ReasonCardBalanceMax,
			"the amount exceeds the largest card balance allowed, %s %s", postings.FormatMinor(lim.CardBalanceMax, cur), cur.Code)
	}
	// The day's card-load limit is charged by the funding entry itself
	// (card_loads.go), like every other load onto a card.

	token := RandomID(20)
	cardNo := "crd_" + token
	pan := st.l.newPAN(in.Bin)
	exp := st.now.UTC().AddDate(3, 0, 0)
	c := st.addCard(cardRow{
		CardNo: cardNo, MerchantID: m.ID, Bin: in.Bin, Currency: in.Currency, Network: bin.Network,
		Last4: pan[len(pan)-4:], ExpiryMonth: int(exp.Month()), ExpiryYear: exp.Year(),
		PanSealed:      st.l.cfg.Sealer.Seal([]byte(pan), "pan:"+cardNo),
		PanFingerprint: st.l.cfg.Sealer.MAC([]byte(pan)),
		Status:         CardActive, Remark: NullString(in.Remark), CallbackURL: NullString(in.CallbackURL),
		CreatedAt: st.now, UpdatedAt: st.now,
	})
	if in.Amount > 0 {
		avail, _ := cardAccounts(m.ID, in.Currency, cardNo)
		if _, err := st.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindCardFund,
			Refs: postings.Refs{CardNo: cardNo},
			Postings: []postings.Posting{{
				Source:      postings.MerchantAccount(m.ID, postings.AccountFunding, in.Currency),
				Destination: avail, Amount: in.Amount, Currency: in.Currency,
			}}}); err != nil {
			return nil, err
		}
	}
	card := cardFromRow(&c.row, in.Amount, 0)
	if err := st.Emit(m.ID, Event{Type: EventCardCreated, Subject: cardNo, CallbackURL: in.CallbackURL, RequestURLOnly: true, Data: cardEventData(card)}); err != nil {
		return nil, err
	}
	return card, nil
}

func (l *Ledger) setCardStatus(ctx context.Context, merchant int64, cardNo, status, reason string, idem *Idempotency) (*Card, error) {
	cmd := &cardCmd{
		cards: []string{cardNo},
		fn: func(st *Tx, h *head) (any, error) {
			c, err := st.cardOf(merchant, cardNo)
			if err != nil {
				return nil, err
			}
			if c.row.Status == CardCancelled {
				return nil, errCardCancelled()
			}
			if c.row.Status != status {
				st.changeCard(c, func(r *cardRow) {
					r.Status = status
					r.FreezeReason = sql.NullString{}
					if status == CardFrozen {
						r.FreezeReason = NullString(reason)
					}
				})
				card, err := st.cardView(c)
				if err != nil {
					return nil, err
				}
				typ := EventCardFrozen
				if status == CardActive {
					typ = EventCardUnfrozen
				}
				if err := st.Emit(merchant, Event{Type: typ, Subject: cardNo, Data: cardEventData(card)}); err != nil {
					return nil, err
				}
				return card, nil
			}
			return st.cardView(c)
		},
	}
	return submitCard[Card](ctx, l, merchant, idem, map[string]string{"op": "status", "cardNo": cardNo, "status": status, "reason": reason}, cmd)
}

func errCardCancelled() error {
	return postings.ReasonErrorf(postings.ESTATE, postings.ReasonCardCancelled, "the card is cancelled")
}

func errCardFrozen() error {
	return postings.ReasonErrorf(postings.ESTATE, postings.ReasonCardFrozen, "the card is frozen")
}

// cardView is the card with its current balances in this batch.
func (st *Tx) cardView(c *cardState) (*Card, error) {
	avail, held := cardAccounts(c.row.MerchantID, c.row.Currency, c.row.CardNo)
	a, err := st.PeekBalance(avail)
	if err != nil {
		return nil, err
	}
	hd, err := st.PeekBalance(held)
	if err != nil {
		return nil, err
	}
	owed, err := st.PeekBalance(postings.CardAccount(c.row.MerchantID, postings.AccountCardReceivable, c.row.Currency, c.row.CardNo))
	if err != nil {
		return nil, err
	}
	card := cardFromRow(&c.row, a, hd)
	card.Receivable = -owed
	return card, nil
}

func (l *Ledger) cancelCard(ctx context.Context, merchant int64, cardNo string, idem *Idempotency) (*CancelResult, error) {
	cmd := &cardCmd{
		cards: []string{cardNo},
		fn: func(st *Tx, h *head) (any, error) {
			c, err := st.cardOf(merchant, cardNo)
			if err != nil {
				return nil, err
			}
			if c.row.Status == CardCancelled {
				return nil, errCardCancelled()
			}
			avail, _ := cardAccounts(merchant, c.row.Currency, cardNo)
			bal, err := st.PeekBalance(avail)
			if err != nil {
				return nil, err
			}
			refunded := int64(0)
			if bal > 0 {
				// What the card owes (a capture it could not cover) is
				// repaid from its balance first; the rest goes home.
				st.changeCard(c, func(r *cardRow) { r.Status = CardCancelled })
				ps, err := st.creditCard(c, avail, bal)
				if err != nil {
					return nil, err
				}
				for _, p := range ps {
					if p.Destination.Type == postings.AccountFunding {
						refunded += p.Amount
					}
				}
				if _, err := st.Post(postings.Entry{Merchant: merchant, Kind: postings.KindCardCancelRefund,
					Refs: postings.Refs{CardNo: cardNo}, Postings: ps}); err != nil {
					return nil, err
				}
			}
			st.changeCard(c, func(r *cardRow) {
				r.Status = CardCancelled
				r.CancelledAt.Time = st.now
			})
			card, err := st.cardView(c)
			if err != nil {
				return nil, err
			}
			if err := st.Emit(merchant, Event{Type: EventCardCancelled, Subject: cardNo, Data: cardEventData(card)}); err != nil {
				return nil, err
			}
			return &CancelResult{Card: *card, Refunded: refunded}, nil
		},
	}
	return submitCard[CancelResult](ctx, l, merchant, idem, map[string]string{"op": "cancel", "cardNo": cardNo}, cmd)
}

func (l *Ledger) transfer(ctx context.Context, merchant int64, in TransferInput, idem *Idempotency) (*TransferResult, error) {
	if in.Direction != DirectionIn && in.Direction != DirectionOut {
		return nil, postings.FieldErrorf("direction", "must be IN or OUT")
	}
	if in.Amount <= 0 || in.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	cmd := &cardCmd{
		cards:    []string{in.CardNo},
		accounts: []postings.Account{postings.MerchantAccount(merchant, postings.AccountFunding, in.Currency)},
		fn: func(st *Tx, h *head) (any, error) {
			return st.transfer(h, in)
		},
	}
	if in.Direction == DirectionIn {
		// A top-up is a card load; mostly in the card's currency, which is
		// the funding side's (a conversion reads the other on demand).
		cmd.loadCurrency = in.Currency
	}
	return submitCard[TransferResult](ctx, l, merchant, idem, in, cmd)
}

func (st *Tx) transfer(h *head, in TransferInput) (*TransferResult, error) {
	m := &h.merchant
	c, err := st.cardOf(m.ID, in.CardNo)
	if err != nil {
		return nil, err
	}
	switch {
	case c.row.Status == CardCancelled:
		return nil, errCardCancelled()
	case c.row.Status == CardFrozen && in.Direction == DirectionIn:
		// A frozen card may be emptied back into the funding account (what
		// merchants expect when they freeze a card they suspect), but not
		// topped up.
		return nil, errCardFrozen()
	}
	if !m.HasCurrency(in.Currency) {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonCurrency, "%s is not one of the merchant's currencies", in.Currency)
	}
	fund := postings.MerchantAccount(m.ID, postings.AccountFunding, in.Currency)
	avail, _ := cardAccounts(m.ID, c.row.Currency, c.row.CardNo)
	res := &TransferResult{
		TxID: "trf_" + RandomID(20), CardNo: c.row.CardNo, Direction: in.Direction,
		Amount: in.Amount, Currency: in.Currency, CardAmount: in.Amount, CardCurrency: c.row.Currency,
		CreatedAt: st.now,
	}
	e := postings.Entry{Merchant: m.ID, Kind: postings.KindCardTransferIn,
		Refs: postings.Refs{CardNo: c.row.CardNo, TxID: res.TxID}}
	if in.Direction == DirectionOut {
		e.Kind = postings.KindCardTransferOut
	}
	switch {
	case in.Currency == c.row.Currency && in.Direction == DirectionOut:
		e.Postings = []postings.Posting{{Source: avail, Destination: fund, Amount: in.Amount, Currency: in.Currency}}
	case in.Currency == c.row.Currency:
		if e.Postings, err = st.creditCard(c, fund, in.Amount); err != nil {
			return nil, err
		}
	default:
		if err := st.convertTransfer(&e, res, c, fund, avail); err != nil {
			return nil, err
		}
	}
	if _, err := st.Post(e); err != nil {
		return nil, err
	}
	if res.CardBalance, err = st.Balance(avail); err != nil {
		return nil, err
	}
	if res.FundingBalance, err = st.Balance(fund); err != nil {
		return nil, err
	}
	if in.Direction == DirectionIn {
		lim, err := st.limit(m, c.row.Currency)
		if err != nil {
			return nil, err
		}
		if res.CardBalance > lim.CardBalanceMax {
			cur := postings.MustCurrency(c.row.Currency)
			return nil, postings.ReasonErrorf(postings.ELIMIT, postings.ReasonCardBalanceMax,
				"the card balance would exceed the largest allowed, %s %s", postings.FormatMinor(lim.CardBalanceMax, cur), cur.Code)
		}
	}
	return res, nil
}

// convertTransfer fills a cross-currency transfer: two balanced legs through
// the FX position accounts. The rate is the operator's mid rate from the
// source currency to the destination's with the spread taken off; the amount
// the card receives (IN) rounds down and the amount it pays (OUT) rounds up,
// so the gateway never pays out a fraction it did not take in.
func (st *Tx) convertTransfer(e *postings.Entry, res *TransferResult, c *cardState, fund, avail postings.Account) error {
	fundCur, cardCur := postings.MustCurrency(res.Currency), postings.MustCurrency(res.CardCurrency)
	base, quote := res.Currency, res.CardCurrency
	if res.Direction == DirectionOut {
		base, quote = quote, base
	}
	rate, err := st.fxRate(base, quote)
	if err != nil {
		return err
	}
	// The spread comes off the rate of the direction the money flows in,
	// rounded down: the merchant gets the worse side.
	client, err := postings.ApplySpread(rate.mid, rate.SpreadBps, postings.RoundDown)
	if err != nil {
		return err
	}
	if res.Direction == DirectionIn {
		res.CardAmount, err = postings.Convert(res.Amount, fundCur, cardCur, client, postings.RoundDown)
	} else {
		// The merchant receives Amount: the card pays Amount / rate, up.
		res.CardAmount, err = postings.ConvertByInverse(res.Amount, fundCur, cardCur, client, postings.RoundUp)
	}
	if err != nil {
		return postings.WithField(err, "amount")
	}
	res.FXRate, res.MidRate, res.SpreadBps = client.String(), rate.MidRate, rate.SpreadBps
	fxFund := postings.MerchantAccount(e.Merchant, postings.AccountFXPosition, res.Currency)
	fxCard := postings.MerchantAccount(e.Merchant, postings.AccountFXPosition, res.CardCurrency)
	if res.Direction == DirectionIn {
		credit, err := st.creditCard(c, fxCard, res.CardAmount)
		if err != nil {
			return err
		}
		e.Postings = append([]postings.Posting{
			{Source: fund, Destination: fxFund, Amount: res.Amount, Currency: res.Currency},
		}, credit...)
	} else {
		e.Postings = []postings.Posting{
			{Source: avail, Destination: fxCard, Amount: res.CardAmount, Currency: res.CardCurrency},
			{Source: fxFund, Destination: fund, Amount: res.Amount, Currency: res.Currency},
		}
	}
	e.Metadata = map[string]string{
		"fx_pair": base + "/" + quote, "fx_rate": res.FXRate, "fx_mid_rate": res.MidRate,
		"fx_spread_bps": strconv.FormatInt(res.SpreadBps, 10),
	}
	return nil
}

func cardFromRow(r *cardRow, available, held int64) *Card {
	c := &Card{
		CardNo: r.CardNo, MerchantID: r.MerchantID, Bin: r.Bin, Network: r.Network, Currency: r.Currency,
		Last4: r.Last4, ExpiryMonth: r.ExpiryMonth, ExpiryYear: r.ExpiryYear, PanRef: panRef(r.CardNo),
		Status: r.Status, FreezeReason: r.FreezeReason.String, Remark: r.Remark.String,
		CallbackURL: r.CallbackURL.String, Available: available, Held: held,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if !r.CancelledAt.IsZero() {
		t := r.CancelledAt.Time.UTC()
		c.CancelledAt = &t
	}
	return c
}

// panRef is the reference to a card's PAN in the vault: it names the sealed
// value without revealing anything about the number.
func panRef(cardNo string) string { return "pan_" + cardNo[len("crd_"):] }

// cardEventData is the card of spec 2.4 as callbacks carry it.
func cardEventData(c *Card) map[string]any {
	cur := postings.MustCurrency(c.Currency)
	return map[string]any{
		"cardNo": c.CardNo, "last4": c.Last4, "status": c.Status, "currency": c.Currency,
		"balance":   postings.Money{Minor: c.Available, Currency: cur},
		"held":      postings.Money{Minor: c.Held, Currency: cur},
		"createdAt": c.CreatedAt.UTC().Format(time.RFC3339),
	}
}

// newPAN draws a PAN for a new card. A PAN already issued is found by the
// database (cards_pan_fingerprint_key) and the batch runs again with new
// draws: see isTransient.
func (l *Ledger) newPAN(bin string) string {
	if l.panSource != nil {
		return l.panSource(bin)
	}
	return newPAN(bin)
}

// newPAN returns bin, random digits and a Luhn check digit: 16 digits. A
// six-digit BIN leaves 10⁹ PANs, so a busy BIN draws one already issued
// now and then (a 50 % chance by ~37,000 cards).
func newPAN(bin string) string {
	digits := make([]byte, 0, 16)
	digits = append(digits, bin...)
	for len(digits) < 15 {
		n, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			panic(err)
		}
		digits = append(digits, byte('0'+n.Int64()))
	}
	return string(append(digits, luhnCheckDigit(string(digits))))
}

// luhnCheckDigit returns the digit that makes payload+digit Luhn-valid.
func luhnCheckDigit(payload string) byte {
	sum := 0
	for i := len(payload) - 1; i >= 0; i-- {
		d := int(payload[i] - '0')
		if (len(payload)-1-i)%2 == 0 { // doubled: these positions are odd from the check digit
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// LuhnValid reports whether a digit string passes the Luhn check.
func LuhnValid(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return luhnCheckDigit(s[:len(s)-1]) == s[len(s)-1]
}
