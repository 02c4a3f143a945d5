package ledger

import (
	"github.com/paygate/gateway/postings"
)

// The daily card-load limit (docs/cards.md, "Limits and KYB tiers"): what a
// merchant may move from its own money onto its cards in one UTC day, per
// currency. It is counted where money moves, on every posting of every
// entry, not in the commands that move it: a card created empty and topped
// up, a cross-currency top-up, a top-up that repays what a card owes, or a
// path added later all count the same, and none can go around it.

// isCardLoad reports whether p moves the merchant's money onto a card: from
// its funding account, or from the FX position that a conversion from its
// funding account feeds, to any account of a card. The card network's
// money (refunds, released holds) and moves between a card's own accounts
// are not loads.
func isCardLoad(p *postings.Posting) bool {
	return (p.Source.Type == postings.AccountFunding || p.Source.Type == postings.AccountFXPosition) &&
		p.Destination.Type.PerCard()
}

// chargeCardLoads adds the card loads of e to the day's counter of their
// currency, refusing the entry (ELIMIT daily_card_issue) when the counter
// would exceed the merchant's limit. The counter changes with an undo, so a
// refused or rolled-back entry leaves it as it was.
func (st *Tx) chargeCardLoads(h *head, e *postings.Entry) error {
	for i := range e.Postings {
		p := &e.Postings[i]
		if !isCardLoad(p) {
			continue
		}
		load := p.Amount
		// The other loads of the entry in the same currency, counted once.
		seen := false
		for j := range e.Postings[:i] {
			if q := &e.Postings[j]; isCardLoad(q) && q.Currency == p.Currency {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		for j := i + 1; j < len(e.Postings); j++ {
			if q := &e.Postings[j]; isCardLoad(q) && q.Currency == p.Currency {
				load += q.Amount
			}
		}
		if err := st.chargeCardLoad(h, p.Currency, load); err != nil {
			return err
		}
	}
	return nil
}

func (st *Tx) chargeCardLoad(h *head, currency string, load int64) error {
	lim, err := st.limit(&h.merchant, currency)
	if err != nil {
		return err
	}
	loaded, err := st.issuedToday(h.merchant.ID, currency)
	if err != nil {
		return err
	}
	if total, ok := postings.AddChecked(loaded.issued, load); !ok || total > lim.DailyCardIssueMax {
		cur := postings.MustCurrency(currency)
		return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonDailyCardIssue,
			"the daily card-load limit of %s %s would be exceeded (%s %s loaded today)",
			postings.FormatMinor(lim.DailyCardIssueMax, cur), cur.Code, postings.FormatMinor(loaded.issued, cur), cur.Code)
	}
	st.addIssued(loaded, load)
	return nil
}
