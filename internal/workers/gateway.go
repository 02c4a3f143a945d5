package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// The gateway's workers and their intervals. A new worker is one more
// entry in Gateway: its step lives in its domain.
const (
	holdExpiryInterval = 30 * time.Second
	remittanceInterval = 500 * time.Millisecond
	callbackPoll       = time.Second // when no commit woke the dispatcher
	pruneInterval      = 10 * time.Minute
	pruneBatchMax      = 10_000
	pruneRoundsMax     = 100 // batches per round, so one round is bounded
)

// Deps are what the gateway's workers drive.
type Deps struct {
	Ledger     *ledger.Ledger
	Network    *network.Service
	Lifecycle  *remittance.Lifecycle
	Dispatcher *delivery.Dispatcher
	// Sender is the dispatcher's: its idle connections are closed when the
	// dispatcher stops.
	Sender *delivery.Sender
	Log    *slog.Logger
	// Checkpoint signs and stores a checkpoint of the journal heads
	// (internal/audit), every CheckpointEvery; nil: no such worker.
	Checkpoint      func(context.Context) error
	CheckpointEvery time.Duration
}

// Gateway returns the gateway's workers, not started: hold expiry, the
// remittance lifecycle, callback dispatch (woken by every commit that
// wrote deliveries) and the pruning of expired idempotency keys.
func Gateway(d Deps) *Group {
	callbacks := NewLoop("callbacks", callbackPoll, func(ctx context.Context) (bool, error) {
		// More may be due right now: a full batch left some behind, and
		// an acknowledged callback frees the next one of its card or
		// remittance. An empty round waits.
		n, err := d.Dispatcher.Round(ctx)
		return n > 0, err
	}, d.Log)
	if d.Sender != nil {
		callbacks.OnStop(d.Sender.CloseIdleConnections)
	}
	d.Ledger.OnCommit(func(c *ledger.CommitInfo) {
		// Events without a target URL have no delivery: waking the
		// dispatcher for them would cost a claim query per commit.
		if c.Deliveries > 0 {
			callbacks.Wake()
		}
	})
	ws := []Worker{
		// Authorizations not cleared in time are released.
		NewLoop("hold-expiry", holdExpiryInterval, func(ctx context.Context) (bool, error) {
			for {
				n, err := d.Network.ExpireHolds(ctx, network.ExpireBatchMax)
				if err != nil || n < network.ExpireBatchMax {
					return false, err
				}
			}
		}, d.Log),
		// Remittances move through screening and the rail.
		NewLoop("remittances", remittanceInterval, func(ctx context.Context) (bool, error) {
			_, err := d.Lifecycle.Step(ctx)
			return false, err
		}, d.Log),
		callbacks,
		// Expired idempotency keys (kept 48 hours) are deleted in bounded
		// batches.
		NewLoop("idempotency-prune", pruneInterval, func(context.Context) (bool, error) {
			for i := 0; i < pruneRoundsMax; i++ {
				n, err := d.Ledger.PruneIdempotency(pruneBatchMax)
				if err != nil || n < pruneBatchMax {
					return false, err
				}
			}
			return false, nil
		}, d.Log),
	}
	if d.Checkpoint != nil {
		// Several gateway processes each sign their own: more checkpoints
		// than needed, never fewer.
		ws = append(ws, NewLoop("checkpoint", d.CheckpointEvery, func(ctx context.Context) (bool, error) {
			return false, d.Checkpoint(ctx)
		}, d.Log))
	}
	return NewGroup(ws...)
}
