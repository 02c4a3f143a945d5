package remittance

import (
	"context"
	"encoding/json"
	"time"

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
	Test bool `bun:"test"`
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
			select tx_id from remittances
			where next_action_at <= ? and (claimed_until is null or claimed_until < ?)
			order by next_action_at
			limit ?
			for update skip locked
		) due
		where r.tx_id = due.tx_id
		returning r.tx_id, r.merchant_id, r.status, r.rail, r.beneficiary, r.next_action_at,
			(select m.test from merchants m where m.id = r.merchant_id) as test`,
		now.Add(claim), now, now, limit).Scan(ctx, &out)
	return out, ledger.MapError(err)
}
