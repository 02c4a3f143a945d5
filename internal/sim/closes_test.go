package sim

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/audit"
)

// Period closes as the simulation runs (docs/audit.md, "Period close";
// issue 30 point 4). A close seals a day or month that has ended on the
// ledger's clock; entries are never back-dated, so the simulation closes
// only what its own clock has left behind:
//
//   - at the start, each merchant's previous day and previous month: they
//     ended before the merchant existed, so the closes are empty (head 0,
//     no balance), and must stay so whatever the run writes after; then
//     the clock moves on past midnight and the first day, with the opening
//     deposits, is closed (closeFirstDay);
//   - whenever the injected clock crosses midnight UTC (or a month's end),
//     the day (month) just ended, at once, before any other step: every
//     entry so far was created before that end, so the close must be the
//     model's state then, account for account, and its head the
//     merchant's whole journal.
//
// After every step run under a fault, audit verify of the faulted merchant
// (of every merchant for a step without one) checks its closes with the
// run's public key, as every periodic verification does for all: no lost
// answer, abandoned commit, slow or cancelled caller may write into a
// closed period or change what a close sealed.

// simCloses are the run's period closes.
type simCloses struct {
	start      time.Time           // the clock at the first closes: periods ended before are empty
	day, month map[int64]time.Time // per merchant, the start of the first period not closed yet
	n          int
}

// signer is the run's signing key, of checkpoints and closes, drawn from
// the seed.
func (s *sim) signer() *audit.Signer {
	if s.cps.signer == nil {
		seed := make([]byte, ed25519.SeedSize)
		for i := range seed {
			seed[i] = byte(s.rng.IntN(256))
		}
		s.cps.signer = audit.NewSigner(ed25519.NewKeyFromSeed(seed))
	}
	return s.cps.signer
}

// closeFirstDay closes the day and month before the run (empty), then
// moves the clock past the next midnight UTC, a few seeded minutes, and
// closes the day just ended, which holds the opening deposits: every run,
// however short, seals a day with balances. The clock only moves forward,
// as the steps' ticks move it; no hold or rate exists yet that the jump
// could age past its limit (the rates are refreshed after it).
func (s *sim) closeFirstDay() {
	s.t.Helper()
	s.closeEnded()
	now := s.nowUTC()
	s.advance(now.Truncate(24*time.Hour).AddDate(0, 0, 1).Sub(now) + time.Duration(s.between(1, 30))*time.Minute)
	s.closeEnded()
	s.refreshRatesIfOld()
}

// closeEnded closes, for every merchant, each day and month that has ended
// on the ledger's clock since the last close (at the first call: the day
// and month before the clock's).
func (s *sim) closeEnded() {
	s.t.Helper()
	now := s.nowUTC()
	cl := &s.closes
	if cl.day == nil {
		cl.start, cl.day, cl.month = now, map[int64]time.Time{}, map[int64]time.Time{}
	}
	today := now.Truncate(24 * time.Hour)
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	for _, m := range s.md.merchants {
		day, ok := cl.day[m.id]
		if !ok {
			day = today.AddDate(0, 0, -1)
		}
		for ; !day.AddDate(0, 0, 1).After(now); day = day.AddDate(0, 0, 1) {
			s.closePeriod(m, audit.PeriodDay, day.Format("2006-01-02"), day.AddDate(0, 0, 1))
		}
		cl.day[m.id] = day
		month, ok := cl.month[m.id]
		if !ok {
			month = thisMonth.AddDate(0, -1, 0)
		}
		for ; !month.AddDate(0, 1, 0).After(now); month = month.AddDate(0, 1, 0) {
			s.closePeriod(m, audit.PeriodMonth, month.Format("2006-01"), month.AddDate(0, 1, 0))
		}
		cl.month[m.id] = month
	}
}

// closePeriod closes one period of m that ended at end and checks the
// close against the model.
func (s *sim) closePeriod(m *mMerchant, kind, period string, end time.Time) {
	s.t.Helper()
	c, err := audit.New(s.l.Ledger).ClosePeriod(context.Background(), s.signer(), m.id, kind, period)
	if err != nil {
		s.fail("ClosePeriod %s %s of merchant %d: %v", kind, period, m.id, err)
	}
	s.closes.n++
	s.stats["period closes "+kind]++
	// Every balance the model holds for m, which is what the close must
	// say when the period ended during the run.
	want := map[string]int64{}
	if end.After(s.closes.start) {
		prefix := fmt.Sprintf("m:%d:", m.id)
		for addr, bal := range s.md.bal {
			if strings.HasPrefix(addr, prefix) && bal != 0 {
				want[addr] = bal
			}
		}
		if c.HeadSeq != m.seq {
			s.fail("the close of %s %s has head %d; the model's journal of merchant %d ends at %d", kind, period, c.HeadSeq, m.id, m.seq)
		}
	} else if c.HeadSeq != 0 {
		s.fail("the close of %s %s, before merchant %d existed, has head %d", kind, period, m.id, c.HeadSeq)
	}
	for _, b := range c.Balances {
		if b.Balance != want[b.Account] {
			s.fail("the close of %s %s says %s is %d; the model says %d", kind, period, b.Account, b.Balance, want[b.Account])
		}
		delete(want, b.Account)
	}
	if len(want) > 0 {
		s.fail("the close of %s %s of merchant %d lacks the accounts %v", kind, period, m.id, want)
	}
}

// checkClosesAfterFault verifies the faulted merchant (every merchant when
// the step had none), closes and signatures included.
func (s *sim) checkClosesAfterFault(o *op, fault string) {
	s.t.Helper()
	if fault == faultNone {
		return
	}
	var merchant int64
	if o.m != nil {
		merchant = o.m.id
	}
	s.stats["verifications after a fault"]++
	rep, err := audit.New(s.l.Ledger).Verify(context.Background(), audit.VerifyOptions{Merchant: merchant, PublicKey: s.signer().Public()})
	if err != nil {
		s.fail("Verify after a fault: %v", err)
	}
	if !rep.OK() {
		s.fail("after the fault, Verify of merchant %d found %v", merchant, rep.Problems)
	}
}

// closesTeeth: the closes checked with another key are refused, so that
// the checks above can fail.
func (s *sim) closesTeeth() {
	s.t.Helper()
	if s.closes.n == 0 {
		s.fail("the run closed no period")
	}
	other := make([]byte, ed25519.SeedSize)
	other[0] = 2
	rep, err := audit.New(s.l.Ledger).Verify(context.Background(), audit.VerifyOptions{
		PublicKey: ed25519.NewKeyFromSeed(other).Public().(ed25519.PublicKey)})
	if err != nil {
		s.fail("Verify with another key: %v", err)
	}
	refused := 0
	for _, p := range rep.Problems {
		if p.Check == audit.CheckPeriodClose && strings.Contains(p.Detail, "another key signed it") {
			refused++
		}
	}
	if refused != s.closes.n {
		s.fail("%d of the run's %d closes were refused with another key: %v", refused, s.closes.n, rep.Problems)
	}
}
