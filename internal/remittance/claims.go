package remittance

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// DueRemittance is a remittance a worker claimed.
type DueRemittance struct {
	TxID        string          `bun:"tx_id"`
	MerchantID  int64           `bun:"merchant_id"`
	Status      string          `bun:"status"`
	Rail        string          `bun:"rail"`
	Beneficiary json.RawMessage `bun:"beneficiary"`
	NextAction  time.Time       `bun:"next_action_at"`
	// Test: the remittance is a test merchant's, whose sandbox settles or
	// returns it (docs/api.md, "The sandbox"); a simulated rail leaves it.
	Test bool `bun:"-"`
}

// ClaimDueRemittances claims up to limit remittances whose next step is
// due, for claim long: rows locked by another worker are skipped (SKIP
// LOCKED), and a claimed row is not claimed again until its claim ends. The
// claim only spreads the work; TransitionRemittance checks the status again
// under the merchant's lock, so a step happens once even if two workers
// hold the same row.
func (s *Service) ClaimDueRemittances(ctx context.Context, limit int, claim time.Duration) ([]DueRemittance, error) {
	now := s.l.Now()
	var out []DueRemittance
	err := s.l.DB().NewRaw(`
		update remittances r set claimed_until = ?
		from (
			select tx_id from remittances x
			where next_action_at <= ? and (claimed_until is null or claimed_until < ?)
			  -- a merchant still arriving by a move: its source steps it until the switch
			  and not exists (select 1 from cellmove_arrivals a where a.merchant_id = x.merchant_id and a.state = 'copying')
			order by next_action_at
			limit ?
			for update skip locked
		) due
		where r.tx_id = due.tx_id
		returning r.tx_id, r.merchant_id, r.status, r.rail, r.beneficiary, r.next_action_at`,
		now.Add(claim), now, now, limit).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return out, ledger.MapError(err)
	}
	// Whether each is a test merchant's is internal/merchant's to say: one
	// batch read for the claim (not one per remittance), after it.
	if err := markTest(ctx, s.l, out); err != nil {
		return nil, err
	}
	return out, nil
}

// markTest sets Test on the remittances of test merchants.
func markTest(ctx context.Context, l *ledger.Ledger, due []DueRemittance) error {
	ids := make([]int64, len(due))
	for i, d := range due {
		ids[i] = d.MerchantID
	}
	ms, err := merchant.Briefs(ctx, l.DB(), ids)
	if err != nil {
		return err
	}
	for i := range due {
		due[i].Test = ms[due[i].MerchantID].Test
	}
	return nil
}
