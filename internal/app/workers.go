package app

import (
	"log/slog"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/workers"
)

// newWorkers returns the background workers (internal/workers), not
// started. Every worker is safe to run in several gateway processes on one
// database.
func newWorkers(cfg *config.Config, s *Services, log *slog.Logger) *workers.Group {
	sender := delivery.NewSender(delivery.SenderOptions{Allow: cfg.CallbackAllow})
	return workers.Gateway(workers.Deps{
		Ledger:  s.Ledger,
		Network: s.Network,
		// The remittance lifecycle with the simulated rail.
		Lifecycle: remittance.NewLifecycle(s.Remit, remittance.LifecycleConfig{
			Rail: &railsim.SimulatedRail{ReturnPattern: cfg.RailReturnPattern, ReturnReason: cfg.RailReturnReason,
				Manual: cfg.RailManual, Now: s.Now},
			Screening: cfg.RemitScreeningDelay, InFlight: cfg.RemitInFlight, RequireSanctionsList: cfg.RequireSanctionsList,
		}),
		Dispatcher: delivery.NewDispatcher(s.Deliveries, sender, delivery.DispatcherOptions{Log: log}),
		Sender:     sender,
		Log:        log,
	})
}
