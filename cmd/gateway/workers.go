package main

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/internal/workers"
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

// startWorkers starts the background workers (internal/workers) until ctx
// ends; the returned function stops them and waits. Every worker is safe to
// run in several gateway processes on one database.
func startWorkers(ctx context.Context, e *env, l *services, s *workerSettings) (wait func()) {
	sender := delivery.NewSender(delivery.SenderOptions{Allow: s.allow})
	g := workers.Gateway(workers.Deps{
		Ledger:  l.Ledger,
		Network: l.network,
		// The remittance lifecycle with the simulated rail.
		Lifecycle: remittance.NewLifecycle(l.remit, remittance.LifecycleConfig{
			Rail: &railsim.SimulatedRail{ReturnPattern: s.railReturnPattern, ReturnReason: s.railReturnReason,
				Manual: s.railManual, Now: l.Now},
			Screening: s.remitScreening, InFlight: s.remitInFlight, RequireSanctionsList: s.requireSanctions,
		}),
		Dispatcher: delivery.NewDispatcher(l.delivery, sender, delivery.DispatcherOptions{Log: e.log}),
		Sender:     sender,
		Log:        e.log,
	})
	g.Start(ctx)
	return g.Stop
}
