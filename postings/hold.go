package postings

// The arithmetic of a card authorization's hold (docs/network.md,
// "Rounding and the odd minor unit"). An authorization in another currency
// than the card's is converted once, when it is approved; every later
// message (reversal, clearing) takes a share of what was then held instead
// of converting again, so that the messages that close an authorization
// always add up to exactly what it held. Converting each message anew would
// round each of them on its own, and a whole reversal in pieces would leave
// a minor unit (and the fee) behind.

// CrossBorderFeeBps is the fee on an authorization in another currency than
// the card's: 1.5 % of the converted amount, rounded up.
const CrossBorderFeeBps = 150

// Hold is what an approved authorization put on hold: TxnAmount minor units
// of Txn as the network sent them, held as Amount minor units of Card plus
// a cross-border Fee. Rate (units of Card for one unit of Txn) is the rate
// of the authorization, zero when Txn is Card.
type Hold struct {
	TxnAmount int64
	Txn, Card Currency
	Rate      Rate
	Amount    int64
	Fee       int64
}

// HoldPart is the part of a hold one message takes: principal and fee, in
// minor units of the card's currency.
type HoldPart struct {
	Amount int64
	Fee    int64
}

// Total is principal plus fee.
func (p HoldPart) Total() int64 { return p.Amount + p.Fee }

// NewHold is the hold of an authorization of txnAmount minor units of txn on
// a card in card. In the card's currency it holds the amount itself and no
// fee. In another, it holds the amount converted at rate rounded up and a
// fee of CrossBorderFeeBps of that, rounded up: the cardholder pays, so the
// odd minor unit of each is the cardholder's (and comes back to the card
// with a whole reversal).
func NewHold(txnAmount int64, txn, card Currency, rate Rate) (Hold, error) {
	if txnAmount <= 0 || txnAmount > AmountMinorMax {
		return Hold{}, FieldErrorf("amount", "must lie between 1 and %d minor units", AmountMinorMax)
	}
	h := Hold{TxnAmount: txnAmount, Txn: txn, Card: card}
	if txn.Code == card.Code {
		h.Amount = txnAmount
		return h, nil
	}
	var err error
	if h.Amount, err = Convert(txnAmount, txn, card, rate, RoundUp); err != nil {
		return Hold{}, err
	}
	if h.Fee, err = FeeBps(h.Amount, CrossBorderFeeBps, RoundUp); err != nil {
		return Hold{}, err
	}
	h.Rate = rate
	return h, nil
}

// check refuses a hold that cannot have come from NewHold, and a message
// amount outside what is still open after txnReversed was reversed.
func (h Hold) check(txnReversed int64) error {
	if h.TxnAmount <= 0 || h.Amount <= 0 || h.Fee < 0 || (h.Txn.Code != h.Card.Code && h.Rate.IsZero()) {
		return Errorf(EINTERNAL, "hold of %d %s held as %d+%d %s is malformed", h.TxnAmount, h.Txn.Code, h.Amount, h.Fee, h.Card.Code)
	}
	if txnReversed < 0 || txnReversed >= h.TxnAmount {
		return Errorf(EINTERNAL, "hold reversed %d of %d", txnReversed, h.TxnAmount)
	}
	return nil
}

// reversedBy is what reversals of txn minor units (in total) have given
// back: the share of principal and of fee, each rounded down. It depends on
// the total only, not on how the reversals were split, and is the whole
// hold when txn is the whole amount.
func (h Hold) reversedBy(txn int64) (HoldPart, error) {
	a, err := Share(h.Amount, txn, h.TxnAmount, RoundDown)
	if err != nil {
		return HoldPart{}, err
	}
	f, err := Share(h.Fee, txn, h.TxnAmount, RoundDown)
	return HoldPart{a, f}, err
}

// Open is what is still held after reversals of txnReversed minor units of
// the transaction currency (in total).
func (h Hold) Open(txnReversed int64) (HoldPart, error) {
	if txnReversed == h.TxnAmount && h.TxnAmount > 0 {
		return HoldPart{}, nil
	}
	if err := h.check(txnReversed); err != nil {
		return HoldPart{}, err
	}
	done, err := h.reversedBy(txnReversed)
	return HoldPart{h.Amount - done.Amount, h.Fee - done.Fee}, err
}

// Reverse is what a reversal of txn minor units of the transaction currency
// gives back, after earlier reversals of txnReversed in total. The card
// receives, so each reversal's share rounds down: the odd minor unit stays
// on hold until the message that closes the authorization, and the
// reversal that brings the total to TxnAmount takes exactly what is left,
// fee included. txn must be 1 … TxnAmount − txnReversed (else EINVALID,
// field amount).
func (h Hold) Reverse(txnReversed, txn int64) (HoldPart, error) {
	if err := h.check(txnReversed); err != nil {
		return HoldPart{}, err
	}
	if txn <= 0 || txn > h.TxnAmount-txnReversed {
		return HoldPart{}, FieldErrorf("amount", "exceeds what the authorization still holds")
	}
	before, err := h.reversedBy(txnReversed)
	if err != nil {
		return HoldPart{}, err
	}
	after, err := h.reversedBy(txnReversed + txn)
	return HoldPart{after.Amount - before.Amount, after.Fee - before.Fee}, err
}

// Capture is what a clearing of txn minor units of the transaction currency
// charges the card, after reversals of txnReversed in total. The cardholder
// pays, so a clearing of part of what is open charges its share rounded up
// (never more than is open); a clearing of exactly what is open charges
// exactly that; a clearing above it charges all that is open plus the
// excess converted at the authorization's rate rounded up, with the fee on
// the excess rounded up. The ledger releases what the clearing leaves open.
func (h Hold) Capture(txnReversed, txn int64) (HoldPart, error) {
	if err := h.check(txnReversed); err != nil {
		return HoldPart{}, err
	}
	if txn <= 0 || txn > AmountMinorMax {
		return HoldPart{}, FieldErrorf("amount", "must lie between 1 and %d minor units", AmountMinorMax)
	}
	before, err := h.reversedBy(txnReversed)
	if err != nil {
		return HoldPart{}, err
	}
	open := h.TxnAmount - txnReversed
	if txn <= open {
		a, err := Share(h.Amount, txnReversed+txn, h.TxnAmount, RoundUp)
		if err != nil {
			return HoldPart{}, err
		}
		f, err := Share(h.Fee, txnReversed+txn, h.TxnAmount, RoundUp)
		return HoldPart{a - before.Amount, f - before.Fee}, err
	}
	part := HoldPart{h.Amount - before.Amount, h.Fee - before.Fee}
	excess := HoldPart{Amount: txn - open}
	if h.Txn.Code != h.Card.Code {
		if excess.Amount, err = Convert(txn-open, h.Txn, h.Card, h.Rate, RoundUp); err != nil {
			return HoldPart{}, err
		}
		if excess.Fee, err = FeeBps(excess.Amount, CrossBorderFeeBps, RoundUp); err != nil {
			return HoldPart{}, err
		}
	}
	return HoldPart{part.Amount + excess.Amount, part.Fee + excess.Fee}, nil
}
