package sim

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// checkPosition is the bill as the whole position (issue 29, point 2;
// docs/finance.md), checked after every run against the model, which knows
// nothing of bill lines: per merchant, the lines of every account sum to
// the model's balance of it (funding, and each card's available, held and
// receivable), the FEE and FEE_REFUND lines sum to the model's fee revenue
// (negated), and the statement over the whole run ties for every account.
// The workload's over-captures and cross-border authorizations are what
// make the held, receivable and fee lines; their counts are in the stats.
func (s *sim) checkPosition() {
	s.t.Helper()
	ctx := context.Background()
	from, to := time.Unix(0, 0), s.nowUTC().Add(time.Hour)
	for _, m := range s.md.merchants {
		r, err := s.l.Bills.BillRange(ctx, m.id, from, to)
		if err != nil {
			s.fail("bill range of merchant %d: %v", m.id, err)
		}
		sums := map[string]int64{} // by account address
		var fees int64
		err = s.l.Bills.BillStream(ctx, m.id, r, 0, func(ls []bill.Line) error {
			for i := range ls {
				l := &ls[i]
				sums[lineAccount(m, l).Address()] += l.Amount
				switch l.Kind {
				case postings.KindFee, postings.KindFeeRefund:
					fees += l.Amount
				}
				s.countLine(l)
			}
			return nil
		})
		if err != nil {
			s.fail("bill of merchant %d: %v", m.id, err)
		}
		accts := []postings.Account{fundOf(m)}
		for _, c := range m.cards {
			accts = append(accts, availOf(c), heldOf(c), recvOf(c))
		}
		for _, a := range accts {
			if sums[a.Address()] != s.md.get(a) {
				s.fail("the bill lines of %s sum to %d, the model's balance is %d", a.Address(), sums[a.Address()], s.md.get(a))
			}
		}
		if want := s.md.get(acctOf(m, postings.AccountFeeRevenue)); -fees != want {
			s.fail("merchant %d: type=FEE (and FEE_REFUND) sums to %d, the model's fee revenue is %d", m.id, fees, want)
		}
		rep, err := reconcile.Statement(ctx, audit.New(s.l.Ledger), m.id, from, to)
		if err != nil {
			s.fail("statement of merchant %d: %v", m.id, err)
		}
		if !rep.OK() {
			s.fail("statement of merchant %d: %d mismatches: %+v", m.id, rep.Mismatches, rep.Accounts)
		}
	}
}

// lineAccount is the model's account of a bill line.
func lineAccount(m *mMerchant, l *bill.Line) postings.Account {
	if l.AccountType == postings.AccountFunding {
		return postings.MerchantAccount(m.id, postings.AccountFunding, l.Currency)
	}
	return postings.CardAccount(m.id, l.AccountType, l.Currency, l.Account)
}

// countLine counts the lines this issue added, for the run's log.
func (s *sim) countLine(l *bill.Line) {
	switch {
	case l.Kind == postings.BillReceivable && l.AccountType == postings.AccountCardReceivable:
		s.stats["bill: receivables"]++
	case l.Kind == postings.BillReceivableRecovery && l.AccountType == postings.AccountCardReceivable:
		s.stats["bill: receivable recoveries"]++
	case l.Kind == postings.KindFee && l.RelatedTo == l.MerchantSeq && l.AccountType == postings.AccountCardAvailable:
		s.stats["bill: cross-border fees held"]++
	}
}

// exhaustingAmount is an authorization of about all the card has, so that
// a clearing above it (within the tolerance) finds the card empty and
// leaves a receivable: the over-captures the bill must show as RECEIVABLE
// lines, and a later credit's RECEIVABLE_RECOVERY.
func (s *sim) exhaustingAmount(c *mCard) int64 {
	avail := s.md.get(availOf(c))
	return max(1, min(avail, simMessageMax[c.m.cur]))
}

// overCaptureAmount is a clearing above the hold within the tolerance (the
// hold itself when the tolerance admits no unit above it).
func (s *sim) overCaptureAmount(h *mHold) int64 {
	top := h.txn + h.txn*simOverCaptureBps/10_000
	if top <= h.txn {
		return h.txn
	}
	return s.between(h.txn+1, top)
}

// emptyCardHold is an open hold whose card could not pay a clearing above
// it out of its available balance (so the excess becomes a receivable),
// else h.
func (s *sim) emptyCardHold(h *mHold) *mHold {
	n := len(s.md.holdList)
	for i, start := 0, s.rng.IntN(max(n, 1)); i < n; i++ {
		c := s.md.holdList[(start+i)%n]
		if c.status == network.AuthOpen && c.held > 0 && s.md.get(availOf(c.card))*10_000 < c.held*simOverCaptureBps {
			return c
		}
	}
	return h
}
