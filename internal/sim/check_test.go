package sim

import (
	"context"
	"fmt"
	"strings"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
)

// checkAfter reads back what a step touched: the funding balance (Balance),
// each card it named (Card: status, available, held) and the length of the
// merchant's journal, which catches any operation applied twice.
func (s *sim) checkAfter(o *op) {
	s.t.Helper()
	if o.all {
		s.fullCheck()
		return
	}
	ctx := context.Background()
	merchants := map[*mMerchant]bool{}
	if o.m != nil {
		merchants[o.m] = true
	}
	for _, c := range o.cards {
		merchants[c.m] = true
		got, err := s.l.Cards.Card(ctx, c.m.id, c.no)
		if err != nil {
			s.fail("Card %s: %v", c.no, err)
		}
		if got.Status != c.status || got.Available != s.md.get(availOf(c)) || got.Held != s.md.get(heldOf(c)) {
			s.fail("card %s is %s available %d held %d; the model says %s available %d held %d", c.no,
				got.Status, got.Available, got.Held, c.status, s.md.get(availOf(c)), s.md.get(heldOf(c)))
		}
	}
	for m := range merchants {
		bal, err := s.l.Balance(ctx, fundOf(m))
		if err != nil {
			s.fail("Balance: %v", err)
		}
		if bal != s.md.get(fundOf(m)) {
			s.fail("merchant %d funding is %d; the model says %d", m.id, bal, s.md.get(fundOf(m)))
		}
		s.checkSeq(m)
	}
}

func (s *sim) checkSeq(m *mMerchant) {
	var seq int64
	if err := s.db.NewRaw(`select last_seq from ledger_heads where merchant_id = ?`, m.id).Scan(context.Background(), &seq); err != nil {
		s.fail("ledger_heads: %v", err)
	}
	if seq != m.seq {
		s.fail("merchant %d has %d journal entries; the model expects %d (an operation ran twice or not at all)", m.id, seq, m.seq)
	}
}

// fullCheck compares every account, card, hold, remittance and stored
// idempotency key with the model.
func (s *sim) fullCheck() {
	s.t.Helper()
	ctx := context.Background()
	s.stats["full checks"]++
	for _, m := range s.md.merchants {
		s.checkSeq(m)
		got, err := audit.New(s.l.Ledger).Balances(ctx, m.id)
		if err != nil {
			s.fail("Balances: %v", err)
		}
		seen := map[string]bool{}
		for _, b := range got {
			addr := b.Account.Address()
			seen[addr] = true
			if want := s.md.bal[addr]; b.Balance != want {
				s.fail("account %s is %d; the model says %d", addr, b.Balance, want)
			}
		}
		prefix := fmt.Sprintf("m:%d:", m.id)
		for addr, want := range s.md.bal {
			if strings.HasPrefix(addr, prefix) && !seen[addr] && want != 0 {
				s.fail("account %s is missing; the model says %d", addr, want)
			}
		}
		for i := 0; i < len(m.cards); i += cards.CardsMax {
			chunk := m.cards[i:min(i+cards.CardsMax, len(m.cards))]
			nos := make([]string, len(chunk))
			for j, c := range chunk {
				nos[j] = c.no
			}
			cards, err := s.l.Cards.Cards(ctx, m.id, nos)
			if err != nil {
				s.fail("Cards: %v", err)
			}
			for _, c := range chunk {
				k := cards[c.no]
				if k == nil || k.Status != c.status {
					s.fail("card %s: %+v, the model says %s", c.no, k, c.status)
				}
			}
		}
		var n int
		if err := s.db.NewRaw(`select count(*) from cards where merchant_id = ?`, m.id).Scan(ctx, &n); err != nil {
			s.fail("cards: %v", err)
		}
		if n != len(m.cards) {
			s.fail("merchant %d has %d cards; the model has %d (a card created twice?)", m.id, n, len(m.cards))
		}
	}

	var holds []struct {
		AuthID   string `bun:"auth_id"`
		Status   string `bun:"status"`
		Held     int64  `bun:"held"`
		Captured int64  `bun:"captured"`
		Released int64  `bun:"released"`
		Amount   int64  `bun:"amount"`
		Fee      int64  `bun:"fee"`
		Txn      int64  `bun:"txn_amount"`
		TxnCur   string `bun:"txn_currency"`
		Reversed int64  `bun:"txn_reversed"`
	}
	if err := s.db.NewRaw(`select auth_id, status, held, captured, released, amount, fee, txn_amount, txn_currency, txn_reversed
		from authorizations`).Scan(ctx, &holds); err != nil {
		s.fail("authorizations: %v", err)
	}
	if len(holds) != len(s.md.holds) {
		s.fail("%d authorizations; the model has %d", len(holds), len(s.md.holds))
	}
	for _, h := range holds {
		w := s.md.holds[h.AuthID]
		if w == nil || h.Status != w.status || h.Held != w.held || h.Captured != w.captured || h.Released != w.released ||
			h.Amount != w.cardAmt || h.Fee != w.fee || h.Txn != w.txn || h.TxnCur != w.txnCur || h.Reversed != w.reversed {
			s.fail("authorization %+v; the model says %+v", h, w)
		}
		// A hold whose reversals reached its whole amount holds nothing,
		// and one that is closed holds nothing.
		if (h.Reversed == h.Txn || h.Status != network.AuthOpen) && h.Held != 0 {
			s.fail("authorization %+v is closed or reversed whole but still holds %d", h, h.Held)
		}
	}
	// Nothing is resolved twice: per authorization, what the journal moved
	// into and out of the card's held account nets to what is still held,
	// and at most one clearing was booked.
	var flows []struct {
		AuthID  string `bun:"auth_id"`
		Net     int64  `bun:"net"`
		Settles int    `bun:"settles"`
	}
	if err := s.db.NewRaw(holdFlowsSQL).Scan(ctx, &flows); err != nil {
		s.fail("hold flows: %v", err)
	}
	for _, f := range flows {
		w := s.md.holds[f.AuthID]
		if w == nil || f.Net != w.held || f.Settles > 1 {
			s.fail("authorization %s: the journal nets %d into its hold with %d clearings; the model holds %+v", f.AuthID, f.Net, f.Settles, w)
		}
	}

	var remits []struct {
		TxID   string `bun:"tx_id"`
		Status string `bun:"status"`
	}
	if err := s.db.NewRaw(`select tx_id, status from remittances`).Scan(ctx, &remits); err != nil {
		s.fail("remittances: %v", err)
	}
	if len(remits) != len(s.md.remits) {
		s.fail("%d remittances; the model has %d", len(remits), len(s.md.remits))
	}
	for _, r := range remits {
		if w := s.md.remits[r.TxID]; w == nil || w.status != r.Status {
			s.fail("remittance %s is %s; the model says %+v", r.TxID, r.Status, w)
		}
	}
	var twice int
	if err := s.db.NewRaw(`select count(*) from (select 1 from remittance_history group by tx_id, status having count(*) > 1) x`).
		Scan(ctx, &twice); err != nil {
		s.fail("remittance_history: %v", err)
	}
	if twice > 0 {
		s.fail("%d remittances went through one status twice", twice)
	}
	var keys int
	if err := s.db.NewRaw(`select count(*) from idempotency_keys`).Scan(ctx, &keys); err != nil {
		s.fail("idempotency_keys: %v", err)
	}
	if keys != len(s.answers) {
		s.fail("%d idempotency keys stored; the model answered %d keyed requests", keys, len(s.answers))
	}
}

// verify runs the ledger's own audit.
func (s *sim) verify() {
	s.t.Helper()
	s.stats["verifications"]++
	rep, err := audit.New(s.l.Ledger).Verify(context.Background(), audit.VerifyOptions{})
	if err != nil {
		s.fail("Verify: %v", err)
	}
	if !rep.OK() {
		var b strings.Builder
		for i, p := range rep.Problems {
			if i == 10 {
				break
			}
			fmt.Fprintf(&b, "\n  %s", p)
		}
		s.fail("Verify found %d problems (+%d omitted):%s", len(rep.Problems), rep.ProblemsOmitted, b.String())
	}
	s.checkpoint()
}

// holdFlowsSQL nets, per authorization, the postings of its entries into
// and out of card held accounts, and counts its clearings.
const holdFlowsSQL = `
	select e.auth_id,
	       coalesce(sum(case when hd.id is not null then p.amount else 0 end), 0)
	     - coalesce(sum(case when hs.id is not null then p.amount else 0 end), 0) as net,
	       count(distinct case when e.kind = 'CARD_SETTLE' then e.merchant_seq end) as settles
	from entries e
	join postings p on p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq
	left join accounts hd on hd.id = p.destination_id and hd.type = 'card_held'
	left join accounts hs on hs.id = p.source_id and hs.type = 'card_held'
	where e.auth_id is not null
	group by e.auth_id`
