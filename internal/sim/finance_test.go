package sim

import (
	"context"
	"fmt"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Finance's movements in the simulation (issue 29): deposits that carry
// the bank's reference, and now and then a deposit booked by mistake that a
// house user proposes to reverse and another approves (maker–checker), so
// that the checks of every step (balances, journal length, Verify with its
// bill, fee and position identities) run over them too.

// depositStep books a deposit: half the time with a bank reference, and
// one in ten of those is reversed by an approved adjustment right after.
func (s *sim) depositStep(m *mMerchant) {
	if !s.chance(50) {
		s.exec(s.opDeposit(m), s.pickFault())
		return
	}
	amount := s.between(500_00, 20_000_00)
	var seq int64
	s.exec(s.opBankDeposit(m, amount, &seq), s.pickFault())
	if seq != 0 && s.chance(10) && s.md.get(fundOf(m)) >= amount {
		s.exec(s.opReverseDeposit(m, seq, amount), faultNone)
	}
}

// opBankDeposit books a deposit with a reference unique to the run; a
// replay (a lost answer's retry) answers the same entry. seq receives the
// entry's seq.
func (s *sim) opBankDeposit(m *mMerchant, amount int64, seq *int64) *op {
	key := s.newKey("bankdep")
	ref := "BANK-" + key
	return &op{
		name: "bank deposit", m: m, key: answerKey(ledger.ScopeLedger, m.id, key),
		call: func(ctx context.Context) (any, error) {
			return deposit.New(s.l.Ledger).Deposit(ctx, m.id, m.cur, amount, ref, &ledger.Idempotency{Key: key})
		},
		expect: func(res any, err error) error {
			if err := wantOK(err); err != nil {
				return err
			}
			r := res.(*deposit.Result)
			m.seq++
			*seq = r.Seq
			s.md.move(acctOf(m, postings.AccountWorld), fundOf(m), amount)
			return check(r.Seq == m.seq && r.BankReference == ref, "bank deposit seq %d ref %q, want seq %d ref %q", r.Seq, r.BankReference, m.seq, ref)
		},
	}
}

// opReverseDeposit: the maker proposes the reversal of entry seq, is
// refused its approval, and a checker approves it: one ADJUSTMENT entry
// that gives the amount back to the world.
func (s *sim) opReverseDeposit(m *mMerchant, seq, amount int64) *op {
	return &op{
		name: "reverse deposit", m: m,
		call: func(ctx context.Context) (any, error) {
			maker, err := s.houseUser(ctx, s.newKey("maker"))
			if err != nil {
				return nil, err
			}
			checker, err := s.houseUser(ctx, s.newKey("checker"))
			if err != nil {
				return nil, err
			}
			adj := adjustment.New(s.l.Ledger)
			p, err := adj.Propose(ctx, maker, adjustment.ProposeInput{Merchant: m.id, Reverses: seq,
				Reason: "deposit booked by mistake", Reference: fmt.Sprintf("SIM-%d-%d", m.id, seq)})
			if err != nil {
				return nil, err
			}
			if _, err := adj.Approve(ctx, maker, m.id, p.ID); postings.ErrorCode(err) == "" {
				return nil, fmt.Errorf("the maker approved its own adjustment: %v", err)
			}
			return adj.Approve(ctx, checker, m.id, p.ID)
		},
		expect: func(res any, err error) error {
			if err := wantOK(err); err != nil {
				return err
			}
			p := res.(*adjustment.Proposal)
			m.seq++
			s.md.move(fundOf(m), acctOf(m, postings.AccountWorld), amount)
			return check(p.Status == adjustment.StatusApproved && p.EntrySeq == m.seq, "adjustment %+v, want approved as entry %d", p, m.seq)
		},
	}
}

// houseUser makes a house operator in the console's users.
func (s *sim) houseUser(ctx context.Context, login string) (adjustment.Actor, error) {
	var id int64
	err := s.db.NewRaw(`insert into console_users (login, role, password_hash, totp_sealed) values (?, 'operator', '$argon2id$test', '\\x00')
		returning id`, login).Scan(ctx, &id)
	return adjustment.Actor{UserID: id, Login: login}, err
}
