package main

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/ledger"
)

// workerSettings are the background workers' settings (docs/operations.md).
type workerSettings struct {
	remitScreening    time.Duration
	remitInFlight     time.Duration
	railManual        bool
	railReturnPattern *regexp.Regexp
	railReturnReason  string
	requireSanctions  bool
	allow             delivery.AllowList
}

func readWorkerSettings(e *env) (*workerSettings, error) {
	s := &workerSettings{
		remitScreening:   envDuration(e, "GATEWAY_REMIT_SCREENING_DELAY", 2*time.Second),
		remitInFlight:    envDuration(e, "GATEWAY_REMIT_IN_FLIGHT", 10*time.Second),
		railManual:       e.getenv("GATEWAY_RAIL_MODE") == "manual",
		railReturnReason: envOr(e, "GATEWAY_RAIL_RETURN_REASON", "AC01"),
		requireSanctions: envBool(e, "GATEWAY_REQUIRE_SANCTIONS_LIST"),
	}
	if !rules.IsReturnReasonCode(s.railReturnReason) {
		return nil, fmt.Errorf("GATEWAY_RAIL_RETURN_REASON must be an ISO 20022 return reason code such as AC01, not %q", s.railReturnReason)
	}
	if mode := e.getenv("GATEWAY_RAIL_MODE"); mode != "" && mode != "manual" && mode != "simulated" {
		return nil, fmt.Errorf("GATEWAY_RAIL_MODE must be simulated or manual, not %q", mode)
	}
	// By default an account number that ends in 0000 comes back as AC01
	// (incorrect account number): a way to see RETURNED without a partner.
	pattern := envOr(e, "GATEWAY_RAIL_RETURN_PATTERN", `0000$`)
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("GATEWAY_RAIL_RETURN_PATTERN: %w", err)
	}
	s.railReturnPattern = re
	if s.allow, err = delivery.AllowListFromEnv(e.getenv); err != nil {
		return nil, err
	}
	return s, nil
}

// Worker intervals.
const (
	expiryInterval      = 30 * time.Second
	remitInterval       = 500 * time.Millisecond
	pruneInterval       = 10 * time.Minute
	pruneBatchMax       = 10_000
	idempotencyPruneMax = 100 // batches per round, so one round is bounded
)

// startWorkers runs the background workers until ctx ends; the returned
// function waits for them. Every worker is safe to run in several gateway
// processes on one database.
func startWorkers(ctx context.Context, e *env, l *ledger.Ledger, s *workerSettings) (wait func()) {
	var wg sync.WaitGroup
	run := func(name string, fn func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn()
			e.log.Debug("worker stopped", "worker", name)
		}()
	}
	every := func(interval time.Duration, fn func() error, name string) func() {
		return func() {
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				if err := fn(); err != nil && ctx.Err() == nil {
					e.log.Warn("worker", "worker", name, "error", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}
	}
	// Hold expiry: authorizations not cleared in time are released.
	run("hold-expiry", every(expiryInterval, func() error {
		for {
			n, err := l.ExpireHolds(ctx, ledger.ExpireBatchMax)
			if err != nil || n < ledger.ExpireBatchMax {
				return err
			}
		}
	}, "hold-expiry"))
	// Remittance lifecycle with the simulated rail.
	rw := ledger.NewRemitWorker(l, ledger.RemitWorkerConfig{
		Rail: &ledger.SimulatedRail{ReturnPattern: s.railReturnPattern, ReturnReason: s.railReturnReason,
			Manual: s.railManual, Now: l.Now},
		Screening: s.remitScreening, InFlight: s.remitInFlight, RequireSanctionsList: s.requireSanctions,
	})
	run("remittances", func() { rw.Run(ctx, remitInterval) })
	// Callbacks, woken by every commit that wrote events.
	sender := delivery.NewSender(delivery.SenderOptions{Allow: s.allow})
	d := delivery.NewDispatcher(delivery.NewStore(l), sender, delivery.DispatcherOptions{Log: e.log})
	l.OnCommit(func(c *ledger.CommitInfo) {
		// Events without a target URL have no delivery: waking the
		// dispatcher for them would cost a claim query per commit.
		if c.Deliveries > 0 {
			d.Wake()
		}
	})
	run("callbacks", func() { d.Run(ctx); sender.CloseIdleConnections() })
	// Expired idempotency keys (kept 48 hours) are deleted in bounded batches.
	run("idempotency-prune", every(pruneInterval, func() error {
		for i := 0; i < idempotencyPruneMax; i++ {
			n, err := l.PruneIdempotency(pruneBatchMax)
			if err != nil || n < pruneBatchMax {
				return err
			}
		}
		return nil
	}, "idempotency-prune"))
	return wg.Wait
}
