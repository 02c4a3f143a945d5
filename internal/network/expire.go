package network

import (
	"context"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// ExpireBatchMax bounds the holds one ExpireHolds call releases.
const ExpireBatchMax = 500

// ExpireHolds releases holds whose authorization was not cleared within the
// hold expiry (default 7 days), at most limit of them, and returns how many
// it released. Several workers may run it: each hold is released by one
// command under its merchant's lock, and one already closed is skipped.
func (s *Service) ExpireHolds(ctx context.Context, limit int) (int, error) {
	if limit <= 0 || limit > ExpireBatchMax {
		limit = ExpireBatchMax
	}
	var due []dueHold
	// A merchant still arriving in this cell by a move (internal/cellmove)
	// is skipped: its source expires the hold until the switch, and a
	// release written here meanwhile would fail the move's verification.
	err := s.l.DB().NewRaw(`select auth_id, merchant_id from authorizations z where status = 'OPEN' and expires_at <= ?
		and not exists (select 1 from cellmove_arrivals a where a.merchant_id = z.merchant_id and a.state = 'copying')
		order by expires_at limit ?`,
		s.l.Now(), limit).Scan(ctx, &due)
	if err != nil {
		return 0, ledger.MapError(err)
	}
	return s.expireDue(ctx, due)
}

// dueHold is an open authorization past its expiry.
type dueHold struct {
	AuthID     string `bun:"auth_id"`
	MerchantID int64  `bun:"merchant_id"`
}

// expireDue releases the due holds, each by one command under its
// merchant's lock, and returns how many it released.
func (s *Service) expireDue(ctx context.Context, due []dueHold) (int, error) {
	n := 0
	for _, d := range due {
		authID := d.AuthID
		cmd := &ledger.Func[HoldResult]{
			Merchant: d.MerchantID,
			Want:     func(tx *ledger.Tx) { wantAuth(tx, authID) },
			Run: func(tx *ledger.Tx, m *ledger.Merchant) (*HoldResult, error) {
				return expire(tx, m, authID)
			},
		}
		res, err := ledger.Do(ctx, s.l, nil, nil, cmd)
		if err != nil {
			return n, err
		}
		if res.Status == AuthExpired && res.Released > 0 {
			n++
		}
	}
	return n, nil
}

func expire(tx *ledger.Tx, m *ledger.Merchant, authID string) (*HoldResult, error) {
	a, err := batchOf.Of(tx).authOf(tx, m.ID, authID)
	if err != nil {
		return nil, err
	}
	if a.row.Status != AuthOpen || tx.Now().Before(a.row.ExpiresAt) {
		return &HoldResult{AuthID: authID, Status: a.row.Status}, nil // resolved meanwhile
	}
	if err := cards.Load(tx, []string{a.row.CardNo}); err != nil {
		return nil, err
	}
	release := a.row.Held
	if err := releaseHold(tx, m, cards.Loaded(tx, a.row.CardNo), &a.row, release, postings.KindCardAuthRelease); err != nil {
		return nil, err
	}
	changeAuth(tx, a, func(r *authRow) {
		r.Released += release
		r.Held = 0
		r.Status = AuthExpired
	})
	return finishHold(tx, m, a, &HoldResult{AuthID: authID, CardNo: a.row.CardNo, Currency: a.row.Currency,
		Released: release, CreatedAt: tx.Now()}, EventAuthExpired)
}
