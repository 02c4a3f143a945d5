package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/workers"
)

// newWorkers returns the background workers (internal/workers), not
// started. Every worker is safe to run in several gateway processes on one
// database.
func newWorkers(cfg *config.Config, s *Services, log *slog.Logger) (*workers.Group, error) {
	sender := delivery.NewSender(delivery.SenderOptions{Allow: cfg.CallbackAllow})
	// Signed checkpoints, when a key is configured: a key that cannot be
	// read stops the start, rather than leaving the auditor without them.
	var checkpoint func(context.Context) error
	if cfg.CheckpointKeyFile != "" {
		signer, err := audit.LoadSigner(cfg.CheckpointKeyFile)
		if err != nil {
			return nil, fmt.Errorf("GATEWAY_CHECKPOINT_KEY_FILE: %w", err)
		}
		a := audit.New(s.Ledger)
		checkpoint = func(ctx context.Context) error {
			c, err := a.Checkpoint(ctx, signer)
			if err == nil {
				log.Info("checkpoint signed", "time", c.Time, "heads", c.TreeSize, "root", c.Root, "keyId", c.KeyID)
			}
			return err
		}
	}
	return workers.Gateway(workers.Deps{
		Checkpoint: checkpoint, CheckpointEvery: cfg.CheckpointEvery,
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
	}), nil
}
