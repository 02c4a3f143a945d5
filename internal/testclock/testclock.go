// Package testclock is a test merchant's clock (docs/api.md, "The
// sandbox", "The test clock"): how far the merchant has moved time ahead
// so that its holds expire, its remittances move and its callbacks retry
// on demand. The journal keeps real time: entries, bill lines and events
// are stamped "now". Advancing by d moves each pending deadline of the
// merchant d earlier, in one transaction with the new offset, so the
// workers need no notion of a merchant's time and their due-queries and
// indexes stay as they are; every other merchant is untouched.
package testclock

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The bounds of one advance, and of a clock: a week past the longest
// deadline (the 7-day hold expiry by default) in one step, and ten years
// in all, so that an offset never nears time.Duration's range.
const (
	AdvanceMin = time.Second
	AdvanceMax = 30 * 24 * time.Hour
	OffsetMax  = 3650 * 24 * time.Hour
)

// Clock is a test merchant's clock: Now is real time plus Offset.
type Clock struct {
	Now    time.Time     `json:"now"`
	Offset time.Duration `json:"offset"`
}

// Service reads and advances test merchants' clocks.
type Service struct {
	l       *ledger.Ledger
	network *network.Service
}

// New returns the clocks of l's merchants; n releases the holds an
// advance made due.
func New(l *ledger.Ledger, n *network.Service) *Service { return &Service{l: l, network: n} }

// Clock returns the merchant's clock (offset 0 until it first advances).
func (s *Service) Clock(ctx context.Context, merchant int64) (*Clock, error) {
	var offset int64
	err := s.l.DB().NewRaw(`select coalesce((select offset_seconds from test_clocks where merchant_id = ?), 0)`, merchant).
		Scan(ctx, &offset)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return s.clock(offset), nil
}

func (s *Service) clock(offsetSeconds int64) *Clock {
	off := time.Duration(offsetSeconds) * time.Second
	return &Clock{Now: s.l.Now().Add(off).UTC().Truncate(time.Second), Offset: off}
}

// CheckAdvance refuses a duration out of bounds (400 naming field).
func CheckAdvance(field string, d time.Duration) error {
	if d < AdvanceMin || d > AdvanceMax || d%time.Second != 0 {
		return postings.FieldErrorf(field, "must be from 1s to 30d in whole seconds")
	}
	return nil
}

// Advance moves a test merchant's clock d ahead: under the merchant's
// journal lock, the offset and every pending deadline of the merchant move
// together or not at all; then the holds this made due are released, so
// that the answer already shows them expired (remittances and callbacks
// follow within their workers' next rounds, a second or less). A live
// merchant has no clock (ENOTFOUND); with idem a repeat advances once.
func (s *Service) Advance(ctx context.Context, merchant int64, d time.Duration, idem *ledger.Idempotency) (*Clock, error) {
	if err := CheckAdvance("duration", d); err != nil {
		return nil, err
	}
	cmd := &ledger.Func[Clock]{Merchant: merchant, Run: func(tx *ledger.Tx, _ *ledger.Merchant) (*Clock, error) {
		return s.advance(tx, merchant, d)
	}}
	c, err := ledger.Do(ctx, s.l, idem, map[string]any{"op": "testclock.advance", "seconds": int64(d / time.Second)}, cmd)
	if err != nil {
		return nil, err
	}
	if _, err := s.network.ExpireMerchantHolds(ctx, merchant); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Service) advance(tx *ledger.Tx, merchant int64, d time.Duration) (*Clock, error) {
	ctx, db := tx.Context(), tx.DB()
	if test, err := network.IsTestMerchant(tx, merchant); err != nil {
		return nil, err
	} else if !test {
		return nil, postings.Errorf(postings.ENOTFOUND, "no test clock for a live merchant")
	}
	// Everything is checked before anything is written: a command's
	// error undoes its journal work, not SQL it ran itself. The merchant's
	// lock makes the read and the write one step.
	var offset int64
	err := db.NewRaw(`select coalesce((select offset_seconds from test_clocks where merchant_id = ?), 0)`, merchant).Scan(ctx, &offset)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	offset += int64(d / time.Second)
	if time.Duration(offset)*time.Second > OffsetMax {
		return nil, postings.FieldErrorf("duration", "would move the clock more than %d days ahead in all", int64(OffsetMax/(24*time.Hour)))
	}
	_, err = db.NewRaw(`insert into test_clocks (merchant_id, offset_seconds, updated_at) values (?, ?, ?)
		on conflict (merchant_id) do update set offset_seconds = excluded.offset_seconds, updated_at = excluded.updated_at`,
		merchant, offset, tx.Now()).Exec(ctx)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	for _, shift := range []func(context.Context, bun.IDB, int64, time.Duration) error{
		network.ShiftHolds, remittance.ShiftNextActions, delivery.ShiftRetries,
	} {
		if err := shift(ctx, db, merchant, d); err != nil {
			return nil, err
		}
	}
	off := time.Duration(offset) * time.Second
	return &Clock{Now: tx.Now().Add(off).UTC().Truncate(time.Second), Offset: off}, nil
}

// ParseAdvance reads an advance as the API writes it: a whole number and
// one unit, s, m, h or d (days of 24 hours), such as "90m" or "7d"; field
// names it in the 400 of anything else or anything out of bounds.
func ParseAdvance(field, s string) (time.Duration, error) {
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	bad := postings.FieldErrorf(field, "must be a whole number and a unit (s, m, h or d), from 1s to 30d, such as \"7d\"")
	if len(s) < 2 || len(s) > 9 {
		return 0, bad
	}
	unit, ok := units[s[len(s)-1]]
	if !ok {
		return 0, bad
	}
	var n int64
	for _, ch := range s[:len(s)-1] {
		if ch < '0' || ch > '9' {
			return 0, bad
		}
		n = n*10 + int64(ch-'0')
	}
	d := time.Duration(n) * unit
	if CheckAdvance(field, d) != nil {
		return 0, bad
	}
	return d, nil
}
