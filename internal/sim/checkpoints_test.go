package sim

import (
	"context"
	"crypto/ed25519"

	"github.com/paygate/gateway/internal/audit"
)

// Signed checkpoints as the simulation runs (docs/audit.md, "Checkpoints";
// issue 30): every verification checks the journal against the first
// checkpoint of the run and the latest, then signs a new one. The faults
// between them (lost answers, abandoned commits, slow and cancelled
// callers) must never rewrite what a checkpoint saw: a rolled-back tail or a
// changed entry is checkpoint_rollback or checkpoint_diverged.

// simCheckpoints are the run's checkpoints and the key that signs them.
type simCheckpoints struct {
	signer      *audit.Signer
	first, last *audit.Checkpoint
}

// checkpoint checks the journal against the run's checkpoints, then writes
// the next one.
func (s *sim) checkpoint() {
	s.t.Helper()
	ctx := context.Background()
	svc := audit.New(s.l.Ledger)
	for _, c := range []*audit.Checkpoint{s.cps.first, s.cps.last} {
		if c == nil {
			continue
		}
		// With the public key, the run's period closes are checked too.
		rep, err := svc.Verify(ctx, audit.VerifyOptions{Checkpoint: c, PublicKey: s.signer().Public()})
		if err != nil {
			s.fail("Verify against the checkpoint of %s: %v", c.Time, err)
		}
		if !rep.OK() {
			s.fail("the journal does not extend the checkpoint of %s: %v", c.Time, rep.Problems)
		}
	}
	c, err := svc.Checkpoint(ctx, s.signer())
	if err != nil {
		s.fail("Checkpoint: %v", err)
	}
	if s.cps.first == nil {
		s.cps.first = c
	}
	s.cps.last = c
	s.stats["checkpoints"]++
}

// checkpointTeeth: the last checkpoint checked with another key is refused,
// so that the checks above can fail.
func (s *sim) checkpointTeeth() {
	s.t.Helper()
	if s.cps.last == nil {
		return
	}
	other := make([]byte, ed25519.SeedSize)
	other[0] = 1
	rep, err := audit.New(s.l.Ledger).Verify(context.Background(), audit.VerifyOptions{
		Checkpoint: s.cps.last, PublicKey: ed25519.NewKeyFromSeed(other).Public().(ed25519.PublicKey)})
	if err != nil {
		s.fail("Verify with another key: %v", err)
	}
	for _, p := range rep.Problems {
		if p.Check == audit.CheckCheckpointSignature {
			return
		}
	}
	s.fail("a checkpoint checked with another key passed: %v", rep.Problems)
}
