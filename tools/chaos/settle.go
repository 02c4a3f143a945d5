package main

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/remittance"
)

// Letting the workers finish before the checks (the multi-instance and HA
// scenarios): every remittance terminal, every hold closed, every callback
// sent; then the remittances' effect on the funding accounts.

// waitCount is a count of what the workers still have to do.
type waitCount struct{ what, query string }

var (
	remitsOpen       = waitCount{"remittances not terminal", `select count(*) from remittances where status not in ('SETTLED', 'RETURNED', 'REJECTED')`}
	holdsOpen        = waitCount{"holds still open", `select count(*) from authorizations where status = 'OPEN'`}
	callbacksPending = waitCount{"callbacks pending", `select count(*) from deliveries where status = 'PENDING'`}
)

// waitNone polls w until it counts none, within limit. A count left, or a
// read that still fails, at the limit is a violation; a failed read before
// it is polled again (the HA scenarios' database may be failing over).
func waitNone(ctx context.Context, db bun.IDB, add func(string, ...any), w waitCount, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		var n int
		err := db.NewRaw(w.query).Scan(ctx, &n)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			add("%d %s after %s (%v)", n, w.what, limit, err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// noteRemitEffects reads each created remittance's final state and notes
// its effect on its merchant's funding account for checkShopOps: amount
// and fee out, the amount back for a return, both for a rejection.
func noteRemitEffects(ctx context.Context, db bun.IDB, add func(string, ...any), remits []*remitPlanned) {
	for _, p := range remits {
		if p.tx == "" {
			continue
		}
		var status string
		if err := db.NewRaw(`select status from remittances where tx_id = ?`, p.tx).Scan(ctx, &status); err != nil {
			add("remittance %s: %v", p.tx, err)
			continue
		}
		p.status = status
		delta := -(p.in.Amount + p.in.Fee)
		switch status {
		case remittance.RemitReturned:
			delta += p.in.Amount
		case remittance.RemitRejected:
			delta += p.in.Amount + p.in.Fee
		}
		p.m.fundingDelta += delta
		p.m.expectedFundingReason = " (and the remittances' final states)"
	}
}

// deliveries are the deliveries table's totals after a run: delivered,
// failed, still pending, and sent more than once.
type deliveries struct {
	Delivered int `bun:"delivered"`
	Failed    int `bun:"failed"`
	Pending   int `bun:"pending"`
	Multi     int `bun:"multi"`
}

func countDeliveries(ctx context.Context, db bun.IDB) (deliveries, error) {
	var dl deliveries
	err := db.NewRaw(`select count(*) filter (where status = 'DELIVERED') as delivered, count(*) filter (where status = 'FAILED') as failed,
		count(*) filter (where status = 'PENDING') as pending, count(*) filter (where attempts > 1) as multi from deliveries`).Scan(ctx, &dl)
	return dl, err
}

// check holds the deliveries to what the receiver saw: every callback
// signed, none failed or left pending, every delivered event received.
func (dl deliveries) check(rs receiverStats, add func(string, ...any)) {
	if rs.badSign > 0 {
		add("%d callbacks had a bad signature", rs.badSign)
	}
	if dl.Failed > 0 || dl.Pending > 0 {
		add("deliveries: %d failed, %d still pending", dl.Failed, dl.Pending)
	}
	if rs.events != dl.Delivered {
		add("the receiver saw %d distinct events; the database has %d delivered", rs.events, dl.Delivered)
	}
}
