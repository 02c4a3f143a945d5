package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// The sanctions list for the operator (the CLI's `sanctions load FILE`):
// the page shows the list remittance screening reads (its version, size,
// first entries, and who loaded it from the console), and takes a new one
// as an upload. The file is parsed by rules.ParseSanctionsList, the CLI's
// parser (one malformed line refuses the whole file, naming the line), and
// loaded by remittance.Service.ReplaceSanctions, the CLI's command, which
// replaces the whole list. Since it replaces everything, the upload leads
// to a confirmation page first (sanctions_pending.go).

const (
	sanctionsPath        = "/operator/sanctions"
	sanctionsConfirmPath = "/operator/sanctions/confirm"
	// sanctionsUploadMax bounds the file from the page, as the settlement
	// file's; a bigger list is the CLI's.
	sanctionsUploadMax = 8 << 20
)

// Sanctions replaces the sanctions list (*remittance.Service).
type Sanctions interface {
	ReplaceSanctions(ctx context.Context, entries []remittance.SanctionsEntry) (int64, error)
}

var _ Sanctions = (*remittance.Service)(nil)

type sanctionsData struct {
	Now    *sanctionsInfo
	Loaded int64 // the version just loaded, for the notice
	Error  string
}

type sanctionsConfirmData struct {
	Now     *sanctionsInfo
	File    string
	Count   int
	Sample  []remittance.SanctionsEntry
	Key     string
	Minutes int
}

func (s *Server) sanctionsPage(w http.ResponseWriter, r *http.Request, sess *session) {
	loaded, err := queryInt(r, "loaded", 1, 1<<62, 0)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	s.renderSanctions(w, r, http.StatusOK, sanctionsData{Loaded: int64(loaded)})
}

func (s *Server) renderSanctions(w http.ResponseWriter, r *http.Request, status int, d sanctionsData) {
	in, err := s.sanctionsInfo(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d.Now = in
	s.render(w, r, status, "sanctions", "Sanctions list", d)
}

// sanctionsUpload parses the uploaded list and asks for the confirmation.
func (s *Server) sanctionsUpload(w http.ResponseWriter, r *http.Request, sess *session) {
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: "file: choose the sanctions list (CSV: name,country[,list,id] with a header line)"})
		return
	}
	defer f.Close()
	name := safeValue(hdr.Filename, auditTargetMax) // what was sent, never dropped (audit_trail.go)
	list, err := rules.ParseSanctionsList(f)
	if err != nil {
		msg := "file: " + postings.AsError(err).Message
		s.record(r, sess, "failed", 0, "sanctions.load", name, clip(msg, 1000))
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: msg})
		return
	}
	entries := make([]remittance.SanctionsEntry, 0, list.Len())
	for _, x := range list.Entries() {
		entries = append(entries, remittance.SanctionsEntry{Name: x.Name, Country: x.Country, List: x.List, Ref: x.ID})
	}
	in, err := s.sanctionsInfo(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	key, err := sanctionsFormKey.new()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.pendingLoads.add(key, &pendingLoad{userID: sess.user.ID, made: s.now(), file: name, entries: entries, count: len(entries)})
	d := sanctionsConfirmData{Now: in, File: name, Count: len(entries), Sample: entries[:min(len(entries), sanctionsSampleMax)],
		Key: key, Minutes: int(sanctionsPendingFor.Minutes())}
	s.render(w, r, http.StatusOK, "sanctions_confirm", "Confirm: replace the sanctions list", d)
}

// sanctionsConfirm loads the confirmed upload, once per key.
func (s *Server) sanctionsConfirm(w http.ResponseWriter, r *http.Request, sess *session) {
	key := r.PostFormValue("idempotencyKey")
	if !sanctionsFormKey.valid(key) {
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: "idempotencyKey: missing or malformed; upload the file again"})
		return
	}
	if s.cfg.Sanctions == nil {
		s.internal(w, r, errors.New("console: built without a sanctions store"))
		return
	}
	// The row is committed before the key is spent (audit_intent.go); the
	// version it loads is its target once known.
	a, ok := s.auditBegin(w, r, sess, 0, "sanctions.load", "", "key "+key)
	if !ok {
		return
	}
	l, found, first := s.pendingLoads.take(key, sess.user.ID, s.now())
	if !found {
		a.refuse("unknown or expired key")
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: "idempotencyKey: this upload is unknown or older than " +
			strconv.Itoa(int(sanctionsPendingFor.Minutes())) + " minutes (or the console restarted); upload the file again"})
		return
	}
	if !first {
		// The same confirmation again: the first one's result, no load.
		version, err := s.pendingLoads.wait(r.Context(), l)
		if err != nil {
			// This request loads nothing whatever the first one's end:
			// that one has its own row.
			a.finish(nil, 0, l.file, "the same confirmation again: nothing loaded; the first: "+postings.AsError(err).Error())
			s.sanctionsFailed(w, r, err)
			return
		}
		a.finish(nil, 0, sanctionsTarget(version), "the same confirmation again: nothing loaded")
		http.Redirect(w, r, sanctionsPath+"?loaded="+strconv.FormatInt(version, 10), http.StatusSeeOther)
		return
	}
	// Detached from the request: a client gone mid-load must not leave
	// the key claimed with no result for the confirmation sent again. It
	// has its own bound instead. Two loads at once (two consoles, a CLI)
	// are serialised by ReplaceSanctions itself.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), sanctionsLoadTimeout)
	version, err := s.cfg.Sanctions.ReplaceSanctions(ctx, l.entries)
	cancel()
	s.pendingLoads.finish(l, version, err)
	if err != nil {
		a.finish(err, 0, l.file, "")
		s.sanctionsFailed(w, r, err)
		return
	}
	a.finish(nil, 0, sanctionsTarget(version), strconv.Itoa(l.count)+" entries from "+l.file)
	http.Redirect(w, r, sanctionsPath+"?loaded="+strconv.FormatInt(version, 10), http.StatusSeeOther)
}

// sanctionsFailed answers a load that did not happen.
func (s *Server) sanctionsFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		w.Header().Set("Retry-After", "1")
		s.fail(w, r, http.StatusServiceUnavailable, "The load is still running; open the sanctions page to see its result.")
		return
	}
	s.domainError(w, r, err)
}
