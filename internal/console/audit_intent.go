package console

import (
	"context"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/postings"
)

// Write-ahead rows, for the actions the console cannot put in one
// transaction with their row: a domain's command (a card's, the ledger's,
// the FX, delivery or remittance domain's) runs in that domain's own
// transaction, behind an interface that takes no transaction of the
// console's (deps.go). So the row goes first:
//
//  1. auditBegin COMMITS the row as 'pending' — who, what, the target and
//     the intent's detail, made safe — before the action. When it cannot,
//     the action is refused (503, Retry-After) and nothing happens: an
//     action never runs without its row.
//  2. After the action, resolve sets the row's outcome once: 'ok', or
//     'failed' with the error's code (postings.Code), or 'refused'; the
//     result (an entry's sequence, a list's version, the error's text) is
//     appended to the detail. sql/0018 lets exactly this change through
//     and refuses every other UPDATE.
//  3. When that update cannot be made (the database lost between the
//     action and it), the row STAYS 'pending', which the trail shows as
//     "outcome unknown": the attempt is on record and the object (the card,
//     the entry by its idempotency key, the merchant) says how it ended.
//     Nothing sweeps pending rows to another outcome: a sweep could only
//     guess, and would race an action that is merely slow; the trail page
//     marks a row pending for longer than auditPendingFor as unknown
//     instead, without writing (docs/audit.md).

// auditResolveTimeout bounds the outcome's update. It is detached from the
// request: a client gone after the action must not leave its row pending.
const auditResolveTimeout = 10 * time.Second

// auditPendingFor is how long an action may take before its pending row is
// shown as "outcome unknown": longer than any action's own bound (the
// sanctions load's is the longest, internal/console/house's sanctionsLoadTimeout).
const auditPendingFor = 15 * time.Minute

// shownOutcome is a row's outcome as the trail page says it: a failure
// with its code; a pending row older than auditPendingFor as unknown, its
// action having outlived every bound it had.
func shownOutcome(e auditEntry, now time.Time) string {
	switch {
	case e.Outcome == "pending" && now.Sub(e.At) > auditPendingFor:
		return "unknown (pending since " + e.At.UTC().Format(time.RFC3339) + "; check the object)"
	case e.ErrorCode != "":
		return e.Outcome + " (" + e.ErrorCode + ")"
	}
	return e.Outcome
}

// auditIntent is the committed pending row of one action.
type auditIntent struct {
	s      *Server
	r      *http.Request
	id     int64
	action string
	detail string // the intent's detail as written: the resolved one starts with it
}

// auditBegin commits the pending row of an action; false after answering
// 503 (the action must not run).
func (s *Server) auditBegin(w http.ResponseWriter, r *http.Request, sess *session, merchant int64, action, target, detail string) (*auditIntent, bool) {
	e := s.entryOf(r, sess, "pending", merchant, action, target, detail)
	id, err := store.InsertAudit(r.Context(), s.store.DB(), e)
	if err != nil {
		s.auditUnavailable(w, r, action, err)
		return nil, false
	}
	return &auditIntent{s: s, r: r, id: id, action: action, detail: e.Detail}, true
}

// Finish resolves the row from the action's error: nil is 'ok', anything
// else 'failed' with its code and text. merchant and target fill in what
// the intent could not name yet (0 and "" leave them); more is the result.
func (a *auditIntent) Finish(err error, merchant int64, target, more string) {
	if err != nil {
		a.end("failed", postings.ErrorCode(err), merchant, target, joinDetail(postings.AsError(err).Error(), more))
		return
	}
	a.end("ok", "", merchant, target, more)
}

// Refuse resolves the row as refused by the console itself, after the
// intent was written (an unknown confirmation key).
func (a *auditIntent) Refuse(more string) { a.end("refused", "", 0, "", more) }

func (a *auditIntent) end(outcome string, code postings.Code, merchant int64, target, more string) {
	detail := a.detail
	// The result is appended in the room the intent left, made safe like
	// every value; with less room than a hash needs, the code alone says it.
	if room := host.AuditDetailMax - utf8.RuneCountInString(detail) - 2; more != "" && room >= 100 {
		detail = joinDetail(detail, host.SafeValue(more, room))
	}
	if target != "" {
		target = host.SafeValue(target, host.AuditTargetMax)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.r.Context()), auditResolveTimeout)
	defer cancel()
	err := a.s.store.ResolveAudit(ctx, a.id, outcome, string(code), merchant, target, detail, a.s.now())
	if err != nil {
		// The row stays pending: "outcome unknown" on the trail.
		a.s.cfg.Log.Error("console audit outcome not recorded: the row stays pending", "id", a.id, "action", a.action,
			"outcome", outcome, "code", code, "err", err)
	}
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}
