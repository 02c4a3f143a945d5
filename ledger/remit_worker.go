package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// Rail is a payment rail as the lifecycle worker sees it: asked about an
// in-flight remittance when it is due, it says SETTLED, RETURNED (with an
// ISO return reason) or "" for still in flight, to be asked again at next.
// A real partner reports through ReportRemittance instead and answers "".
type Rail interface {
	Outcome(ctx context.Context, r DueRemittance) (status, reason string, next time.Time, err error)
}

// SimulatedRail settles every remittance after InFlight, except those whose
// beneficiary account number matches ReturnPattern, which come back with
// ReturnReason. With Manual set it never decides: settle and return come
// from the rail endpoint or `gateway rail settle|return`.
type SimulatedRail struct {
	InFlight      time.Duration
	ReturnPattern *regexp.Regexp
	ReturnReason  string // ISO 20022 return reason, e.g. AC01 (incorrect account number)
	Manual        bool
	Now           func() time.Time
}

// Outcome implements Rail.
func (s *SimulatedRail) Outcome(_ context.Context, r DueRemittance) (string, string, time.Time, error) {
	if s.Manual {
		return "", "", s.Now().Add(24 * time.Hour), nil
	}
	var b struct {
		AccountNo string `json:"account_no"`
		IBAN      string `json:"iban"`
		Account   string `json:"account_number"`
	}
	_ = json.Unmarshal(r.Beneficiary, &b)
	if s.ReturnPattern != nil {
		for _, a := range []string{b.AccountNo, b.IBAN, b.Account} {
			if a != "" && s.ReturnPattern.MatchString(a) {
				return RemitReturned, s.ReturnReason, time.Time{}, nil
			}
		}
	}
	return RemitSettled, "", time.Time{}, nil
}

// RemitWorkerConfig tunes the lifecycle worker.
type RemitWorkerConfig struct {
	Rail      Rail
	Screening time.Duration // time in SCREENING before the screen decides
	InFlight  time.Duration // time in IN_FLIGHT before the rail is asked
	BatchMax  int           // remittances claimed per round; default 100
	Claim     time.Duration // how long a claim lasts; default 30s
	// RequireSanctionsList refuses to pass screening while no list is
	// loaded; without it an empty list screens nothing (local use).
	RequireSanctionsList bool
}

// RemitWorker moves remittances through their lifecycle. Several may run,
// in one process or many: claims are taken with SKIP LOCKED and each step is
// checked again under the merchant's lock.
type RemitWorker struct {
	l   *Ledger
	cfg RemitWorkerConfig

	mu       sync.Mutex
	list     *rules.SanctionsList
	listVers int64
}

// NewRemitWorker returns a worker; call Step or Run.
func NewRemitWorker(l *Ledger, cfg RemitWorkerConfig) *RemitWorker {
	if cfg.BatchMax <= 0 {
		cfg.BatchMax = 100
	}
	if cfg.Claim <= 0 {
		cfg.Claim = 30 * time.Second
	}
	return &RemitWorker{l: l, cfg: cfg}
}

// Run takes steps every interval until ctx ends.
func (w *RemitWorker) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := w.Step(ctx); err != nil && ctx.Err() == nil {
			w.l.log.Warn("remittance worker", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Step claims the due remittances and moves each one step; it returns how
// many moved.
func (w *RemitWorker) Step(ctx context.Context) (int, error) {
	due, err := w.l.ClaimDueRemittances(ctx, w.cfg.BatchMax, w.cfg.Claim)
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
		_, ok, err := w.l.TransitionRemittance(ctx, d.MerchantID, *t, nil)
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
func (w *RemitWorker) decide(ctx context.Context, d DueRemittance) (*RemittanceTransition, error) {
	now := w.l.now()
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
			_, err := w.l.db.NewRaw(`update remittances set next_action_at = ?, claimed_until = null where tx_id = ? and status = ?`,
				next, d.TxID, RemitInFlight).Exec(ctx)
			return nil, MapError(err)
		}
		t.To, t.Reason = status, reason
	default:
		return nil, nil
	}
	return t, nil
}

// screen checks the beneficiary's name and country against the loaded
// list, reloading it when the operator replaced it.
func (w *RemitWorker) screen(ctx context.Context, d DueRemittance) (bool, string, error) {
	version, err := w.l.SanctionsVersion(ctx)
	if err != nil {
		return false, "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if version != w.listVers || w.list == nil {
		entries, v, err := w.l.Sanctions(ctx)
		if err != nil {
			return false, "", err
		}
		var buf bytes.Buffer
		cw := csv.NewWriter(&buf)
		for _, e := range entries {
			_ = cw.Write([]string{e.Name, e.Country, e.List, e.Ref})
		}
		cw.Flush()
		list, err := rules.ParseSanctionsList(&buf)
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
		return false, "", Invariantf("remittance %s beneficiary: %v", d.TxID, err)
	}
	hit, entry := w.list.Screen(b.Name, b.Country)
	return hit, entry, nil
}

// ReportRemittance records a rail partner's report that an in-flight
// remittance SETTLED or RETURNED. It is idempotent on the partner's message
// id (scope rail): a repeat answers the same and moves nothing.
func (l *Ledger) ReportRemittance(ctx context.Context, messageID, txID, status, reason string) (*Remittance, error) {
	if !postings.IsRefText(messageID) {
		return nil, postings.FieldErrorf("messageId", "must be 1 to 64 characters of [A-Za-z0-9_.:-]")
	}
	if status != RemitSettled && status != RemitReturned {
		return nil, postings.FieldErrorf("status", "must be SETTLED or RETURNED")
	}
	if status == RemitReturned && reason == "" {
		return nil, postings.FieldErrorf("reason", "a return needs its ISO reason code, e.g. AC01")
	}
	if reason != "" && !rules.IsReturnReasonCode(reason) {
		// The reason is shown to the merchant: a code, never free text.
		return nil, postings.FieldErrorf("reason", "must be an ISO 20022 return reason code such as AC01")
	}
	if status != RemitReturned {
		reason = "" // a settlement has no reason; the doors refuse one (POST /rail/report, rail settle)
	}
	var merchant int64
	err := l.db.NewRaw(`select merchant_id from remittances where tx_id = ?`, txID).Scan(ctx, &merchant)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errRemitNotFound()
	}
	if err != nil {
		return nil, MapError(err)
	}
	r, _, err := l.TransitionRemittance(ctx, merchant, RemittanceTransition{TxID: txID, To: status, Reason: reason},
		&Idempotency{Scope: ScopeRail, Key: messageID})
	return r, err
}
