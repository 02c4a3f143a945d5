package books

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/console/store"
)

// audit verify from the page runs in the background: the POST starts a run
// and sends the browser to the run's page, which shows the progress the
// ledger reports (VerifyOptions.Progress: entries checked of the total the
// heads announce) and then the report. One run at a time per console; the
// last verifyRunsKept runs stay in memory to be looked at, the oldest
// finished one goes first.

// verifyTimeout bounds one verify run from the page; the CLI has none.
const verifyTimeout = 10 * time.Minute

// verifyRunsKept bounds the runs kept in memory.
const verifyRunsKept = 20

// verifyRefreshSeconds is how often the run page reloads (without
// JavaScript) or polls (with htmx) while the run is going.
const verifyRefreshSeconds = 2

// verifyRun is one audit verify started from the page.
type verifyRun struct {
	ID      string
	ShopNo  string // "" for every merchant
	Login   string // who started it
	Started time.Time

	mu       sync.Mutex
	done     int64 // entries checked
	total    int64 // entries the heads announce
	finished time.Time
	report   *audit.Report
	err      string // a failure of the run itself (not a break)
}

// verifyView is a run as the page shows it, copied under the run's lock.
type verifyView struct {
	ID, ShopNo, Login string
	Started, Finished time.Time
	Done, Total       int64
	Percent           int64
	Running           bool
	Report            *audit.Report
	Err               string
}

// RefreshSeconds asks the layout to reload the page while the run goes
// (host.Refresher).
func (v verifyView) RefreshSeconds() int {
	if v.Running {
		return verifyRefreshSeconds
	}
	return 0
}

func (run *verifyRun) view() verifyView {
	run.mu.Lock()
	defer run.mu.Unlock()
	v := verifyView{ID: run.ID, ShopNo: run.ShopNo, Login: run.Login, Started: run.Started, Finished: run.finished,
		Done: run.done, Total: run.total, Report: run.report, Err: run.err, Running: run.finished.IsZero(), Percent: 100}
	if run.total > 0 {
		v.Percent = min(max(run.done*100/run.total, 0), 100)
	}
	return v
}

func (run *verifyRun) progress(done, total int64) {
	run.mu.Lock()
	run.done, run.total = done, total
	run.mu.Unlock()
}

// verifyRuns are the console's runs: at most one going.
type verifyRuns struct {
	mu      sync.Mutex
	running *verifyRun
	runs    []*verifyRun // oldest first, at most verifyRunsKept
}

// start registers a run, or returns the one going.
func (rs *verifyRuns) start(run *verifyRun) (going *verifyRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.running != nil {
		return rs.running
	}
	rs.running = run
	if len(rs.runs) >= verifyRunsKept {
		rs.runs = append(rs.runs[:0], rs.runs[1:]...) // the oldest is finished: only one runs
	}
	rs.runs = append(rs.runs, run)
	return nil
}

// finish ends the run: publish sets its outcome while no other run can
// start.
func (rs *verifyRuns) finish(run *verifyRun, publish func()) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	publish()
	if rs.running == run {
		rs.running = nil
	}
}

func (rs *verifyRuns) byID(id string) *verifyRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// recent lists the runs, newest first.
func (rs *verifyRuns) recent() []verifyView {
	rs.mu.Lock()
	runs := append([]*verifyRun(nil), rs.runs...)
	rs.mu.Unlock()
	out := make([]verifyView, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- {
		out = append(out, runs[i].view())
	}
	return out
}

type verifyData struct {
	ShopNo string
	Runs   []verifyView
}

func (s *pages) verifyPage(w http.ResponseWriter, r *http.Request, u *host.User) {
	s.h.Render(w, r, http.StatusOK, "verify", "Audit verify", verifyData{Runs: s.runs.recent()})
}

// verify starts the ledger's Verify (the CLI's audit verify) in the
// background and sends the browser to the run's page. The run outlives the
// request: it is bounded by verifyTimeout, not by the browser staying.
func (s *pages) verify(w http.ResponseWriter, r *http.Request, u *host.User) {
	shop := r.PostFormValue("shopNo")
	m, err := s.merchantOfQuery(r.Context(), shop)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		s.h.Internal(w, r, err)
		return
	}
	run := &verifyRun{ID: hex.EncodeToString(id), ShopNo: shop, Login: u.Login, Started: s.h.Now()}
	if going := s.runs.start(run); going != nil {
		w.Header().Set("Retry-After", "10")
		s.h.Render(w, r, http.StatusServiceUnavailable, "verify_busy", "Audit verify", going.view())
		return
	}
	opts := audit.VerifyOptions{Progress: run.progress}
	if m != nil {
		opts.Merchant = m.ID
	}
	s.h.Record(r, "ok", opts.Merchant, "audit.verify.start", shop, "run "+run.ID)
	user, addr := *u, host.ClientAddr(r)
	go s.runVerify(run, opts, user, addr)
	http.Redirect(w, r, "/audit/verify/"+run.ID, http.StatusSeeOther)
}

// runVerify runs one verify and records its outcome in the audit trail
// under the user who started it. The row is written before the run shows
// as finished, and the run stops being the one going at that same moment:
// whoever sees the report can start the next run and find the row.
func (s *pages) runVerify(run *verifyRun, opts audit.VerifyOptions, user host.User, addr string) {
	// As net/http recovers a handler's panic, so does the run: a bug in
	// it ends the run, not the gateway.
	defer func() {
		if p := recover(); p != nil {
			s.d.Log.Error("console audit verify panicked", "run", run.ID, "panic", p)
			s.runs.finish(run, func() {
				run.mu.Lock()
				run.finished, run.err = s.h.Now(), "audit verify failed; the gateway's log has the reason"
				run.mu.Unlock()
			})
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	rep, err := s.d.Audit.Verify(ctx, opts)
	var failure string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		failure = "audit verify took more than " + verifyTimeout.String() + " from the page; run gateway audit verify"
		rep = nil
	case err != nil:
		s.d.Log.Error("console audit verify failed", "run", run.ID, "err", err)
		failure = "audit verify failed; the gateway's log has the reason"
		rep = nil
	}
	outcome, detail := "ok", "0 breaks"
	switch {
	case failure != "":
		outcome, detail = "failed", failure
	case !rep.OK():
		outcome, detail = "failed", strconv.Itoa(len(rep.Problems))+" breaks"
	}
	// Its own bound: the run's context may be the one that ran out.
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer acancel()
	err = s.d.Trail.Audit(actx, store.AuditEntry{At: s.h.Now(), UserID: user.ID, Login: user.Login, Role: user.Role,
		MerchantID: opts.Merchant, Action: "audit.verify", Target: run.ShopNo, Detail: detail + " (run " + run.ID + ")",
		Outcome: outcome, Address: addr})
	if err != nil {
		s.d.Log.Error("console audit trail write failed", "action", "audit.verify", "err", err)
	}
	s.runs.finish(run, func() {
		run.mu.Lock()
		run.finished, run.report, run.err = s.h.Now(), rep, failure
		run.mu.Unlock()
	})
}

// verifyRunPage shows a run: its progress while it goes (the page reloads
// itself without JavaScript, htmx polls its part with it), then its report.
func (s *pages) verifyRunPage(w http.ResponseWriter, r *http.Request, u *host.User) {
	run := s.runs.byID(r.PathValue("id"))
	if run == nil {
		s.h.NotFound(w, r)
		return
	}
	s.h.Render(w, r, http.StatusOK, "verify_run", "Audit verify", run.view())
}
