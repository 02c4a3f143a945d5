package remittance

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// LifecycleConfig tunes the lifecycle worker.
type LifecycleConfig struct {
	Rail      Rail
	Screening time.Duration // time in SCREENING before the screen decides
	InFlight  time.Duration // time in IN_FLIGHT before the rail is asked
	BatchMax  int           // remittances claimed per round; default 100
	Claim     time.Duration // how long a claim lasts; default 30s
	// RequireSanctionsList refuses to pass screening while no list is
	// loaded; without it an empty list screens nothing (local use).
	RequireSanctionsList bool
}

// Lifecycle moves remittances through their lifecycle, one Step at a time
// (internal/workers runs it). Several may run, in one process or many:
// claims are taken with SKIP LOCKED and each step is checked again under
// the merchant's lock.
type Lifecycle struct {
	s   *Service
	cfg LifecycleConfig

	mu       sync.Mutex
	list     *rules.SanctionsList
	listVers int64
}

// NewLifecycle returns the lifecycle worker of s's remittances.
func NewLifecycle(s *Service, cfg LifecycleConfig) *Lifecycle {
	if cfg.BatchMax <= 0 {
		cfg.BatchMax = 100
	}
	if cfg.Claim <= 0 {
		cfg.Claim = 30 * time.Second
	}
	return &Lifecycle{s: s, cfg: cfg}
}

// Step claims the due remittances and moves each one step; it returns how
// many moved.
func (w *Lifecycle) Step(ctx context.Context) (int, error) {
	due, err := w.s.ClaimDueRemittances(ctx, w.cfg.BatchMax, w.cfg.Claim)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, d := range due {
		t, err := w.decide(ctx, d)
		if err != nil {
			return moved, err
		}
		if t == nil {
			continue
		}
		_, ok, err := w.s.TransitionRemittance(ctx, d.MerchantID, *t, nil)
		if err != nil {
			return moved, err
		}
		if ok {
			moved++
		}
	}
	return moved, nil
}

// decide picks the next step of a due remittance, or nil to wait.
func (w *Lifecycle) decide(ctx context.Context, d DueRemittance) (*RemittanceTransition, error) {
	now := w.s.l.Now()
	t := &RemittanceTransition{TxID: d.TxID, From: d.Status}
	switch d.Status {
	case RemitSubmitted:
		t.To, t.NextActionAt = RemitScreening, now.Add(w.cfg.Screening)
	case RemitScreening:
		hit, entry, err := w.screen(ctx, d)
		if err != nil {
			return nil, err
		}
		if hit {
			t.To, t.Reason = RemitRejected, "sanctions screening: "+entry
		} else {
			t.To, t.NextActionAt = RemitInFlight, now.Add(w.cfg.InFlight)
		}
	case RemitInFlight:
		status, reason, next, err := w.cfg.Rail.Outcome(ctx, d)
		if err != nil {
			return nil, err
		}
		if status == "" {
			// Still in flight: ask again later (the claim expires by then).
			_, err := w.s.l.DB().NewRaw(`update remittances set next_action_at = ?, claimed_until = null where tx_id = ? and status = ?`,
				next, d.TxID, RemitInFlight).Exec(ctx)
			return nil, ledger.MapError(err)
		}
		t.To, t.Reason = status, reason
	default:
		return nil, nil
	}
	return t, nil
}

// screen checks the beneficiary's name and country against the loaded
// list, reloading it when the operator replaced it.
func (w *Lifecycle) screen(ctx context.Context, d DueRemittance) (bool, string, error) {
	version, err := w.s.SanctionsVersion(ctx)
	if err != nil {
		return false, "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if version != w.listVers || w.list == nil {
		list, v, err := w.s.SanctionsList(ctx)
		if err != nil {
			return false, "", err
		}
		w.list, w.listVers = list, v
	}
	if w.cfg.RequireSanctionsList && w.list.Len() == 0 {
		return false, "", postings.Errorf(postings.EUNAVAILABLE, "no sanctions list is loaded")
	}
	var b struct {
		Name    string `json:"name"`
		Country string `json:"country"`
	}
	if err := json.Unmarshal(d.Beneficiary, &b); err != nil {
		return false, "", ledger.Invariantf("remittance %s beneficiary: %v", d.TxID, err)
	}
	hit, entry := w.list.Screen(b.Name, b.Country)
	return hit, entry, nil
}
