package adjustment

import (
	"context"

	"github.com/paygate/gateway/postings"
)

// The ADJUSTMENT entry a proposal posts.

// Metadata keys of an ADJUSTMENT entry (postings.Entry.Metadata).
const (
	metaAdjustment = "adjustment"   // the adjustment's id
	metaCorrects   = "corrects_seq" // a reversal: the entry it reverses
)

// reversibleKinds are the kinds a reversal undoes (the package comment
// says why no others).
var reversibleKinds = map[postings.Kind]bool{postings.KindDeposit: true, postings.KindFee: true,
	postings.KindFeeRefund: true, postings.KindAdjustment: true}

// entry builds the proposal's ADJUSTMENT entry.
func (s *Service) entry(ctx context.Context, p *Proposal) (postings.Entry, error) {
	if p.Mode == ModeReversal {
		return s.reversal(ctx, p)
	}
	funding := postings.MerchantAccount(p.Merchant, postings.AccountFunding, p.Amount.Currency.Code)
	house := postings.MerchantAccount(p.Merchant, postings.AccountType(p.House), p.Amount.Currency.Code)
	ps := postings.Posting{Source: house, Destination: funding, Amount: p.Amount.Minor, Currency: p.Amount.Currency.Code}
	if p.Direction == DirectionDebit {
		ps.Source, ps.Destination = funding, house
	}
	return postings.Entry{Merchant: p.Merchant, Kind: postings.KindAdjustment, Postings: []postings.Posting{ps},
		Refs: postings.Refs{TxID: txID(p)}, Metadata: map[string]string{metaAdjustment: itoa(p.ID)}}, nil
}

// reversal is the exact opposite of the merchant's entry p.ReversesSeq:
// each posting with its ends swapped, the same amount and currency. The
// journal is append-only, so the entry read before the batch is the entry.
func (s *Service) reversal(ctx context.Context, p *Proposal) (postings.Entry, error) {
	recs, err := s.l.Entries(ctx, p.Merchant, p.ReversesSeq, p.ReversesSeq, 1)
	if err != nil {
		return postings.Entry{}, err
	}
	if len(recs) == 0 {
		return postings.Entry{}, &postings.Error{Code: postings.ENOTFOUND, Field: "reverses",
			Message: "the merchant has no entry " + itoa(p.ReversesSeq)}
	}
	orig := recs[0]
	if problem := notReversible(&orig); problem != "" {
		return postings.Entry{}, &postings.Error{Code: postings.ESTATE, Field: "reverses",
			Message: "entry " + itoa(p.ReversesSeq) + " (" + string(orig.Kind) + ") " + problem}
	}
	e := postings.Entry{Merchant: p.Merchant, Kind: postings.KindAdjustment, Refs: postings.Refs{TxID: txID(p)},
		Metadata: map[string]string{metaAdjustment: itoa(p.ID), metaCorrects: itoa(p.ReversesSeq)}}
	for _, ps := range orig.Postings {
		e.Postings = append(e.Postings, postings.Posting{Source: ps.Destination, Destination: ps.Source,
			Amount: ps.Amount, Currency: ps.Currency})
	}
	return e, nil
}

// notReversible says why an entry is not reversed here, "" when it is.
func notReversible(r *postings.Record) string {
	if !reversibleKinds[r.Kind] {
		return "is not reversed by an adjustment: a card, hold, remittance or conversion is corrected by its own command"
	}
	if _, ok := r.Metadata[metaCorrects]; ok {
		return "is itself a reversal: propose a free adjustment instead"
	}
	for _, ps := range r.Postings {
		if !reversible[ps.Source.Type] || !reversible[ps.Destination.Type] {
			return "moves a card's account: correct it with the card's own commands"
		}
	}
	return ""
}
