package house

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// The sanctions list for the operator (the CLI's `sanctions load FILE`):
// the page shows the list remittance screening reads (its version, size,
// first entries, and who loaded it from the console), and takes a new one
// as an upload. The file is checked by rules.ReadSanctionsList, the CLI's
// parser (one malformed line refuses the whole file, naming the line), as
// a stream that keeps only a count and a sample, and kept as its bytes
// (at most sanctionsUploadMax) until the confirmation, which loads them
// with remittance.Service.LoadSanctions, the CLI's command: read again as
// a stream and inserted in batches, one load at a time, replacing the
// whole list. Since it replaces everything, the upload leads to a
// confirmation page first (sanctions_pending.go).

const (
	sanctionsPath        = "/operator/sanctions"
	sanctionsConfirmPath = "/operator/sanctions/confirm"
	// sanctionsUploadMax bounds the file from the page, as the settlement
	// file's; a bigger list is the CLI's.
	sanctionsUploadMax = 8 << 20
)

// Sanctions replaces the sanctions list (*remittance.Service).
type Sanctions interface {
	LoadSanctions(ctx context.Context, r io.Reader) (version int64, n int, err error)
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

func (s *pages) sanctionsPage(w http.ResponseWriter, r *http.Request, u *host.User) {
	loaded, err := host.QueryInt(r, "loaded", 1, 1<<62, 0)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	s.renderSanctions(w, r, http.StatusOK, sanctionsData{Loaded: int64(loaded)})
}

func (s *pages) renderSanctions(w http.ResponseWriter, r *http.Request, status int, d sanctionsData) {
	in, err := s.sanctionsInfo(r.Context())
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	d.Now = in
	s.h.Render(w, r, status, "sanctions", "Sanctions list", d)
}

// sanctionsUpload parses the uploaded list and asks for the confirmation.
func (s *pages) sanctionsUpload(w http.ResponseWriter, r *http.Request, u *host.User) {
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: "file: choose the sanctions list (CSV: name,country[,list,id] with a header line)"})
		return
	}
	defer f.Close()
	name := host.SafeValue(hdr.Filename, host.AuditTargetMax) // what was sent, never dropped (internal/console/audit_trail.go)
	data, count, sample, err := readSanctionsUpload(f)
	if err != nil {
		msg := "file: " + postings.AsError(err).Message
		s.h.Record(r, "failed", 0, "sanctions.load", name, host.Clip(msg, 1000))
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: msg})
		return
	}
	in, err := s.sanctionsInfo(r.Context())
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	key, err := sanctionsFormKey.new()
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	s.pendingLoads.add(key, &pendingLoad{userID: u.ID, made: s.h.Now(), file: name, data: data, count: count})
	d := sanctionsConfirmData{Now: in, File: name, Count: count, Sample: sample,
		Key: key, Minutes: int(sanctionsPendingFor.Minutes())}
	s.h.Render(w, r, http.StatusOK, "sanctions_confirm", "Confirm: replace the sanctions list", d)
}

// sanctionsConfirm loads the confirmed upload, once per key.
func (s *pages) sanctionsConfirm(w http.ResponseWriter, r *http.Request, u *host.User) {
	key := r.PostFormValue("idempotencyKey")
	if !sanctionsFormKey.valid(key) {
		s.renderSanctions(w, r, http.StatusBadRequest, sanctionsData{Error: "idempotencyKey: missing or malformed; upload the file again"})
		return
	}
	if s.d.Sanctions == nil {
		s.h.Internal(w, r, errors.New("console: built without a sanctions store"))
		return
	}
	// The row is committed before the key is spent (internal/console/audit_intent.go); the
	// version it loads is its target once known.
	a, ok := s.h.Begin(w, r, 0, "sanctions.load", "", "key "+key)
	if !ok {
		return
	}
	l, found, first := s.pendingLoads.take(key, u.ID, s.h.Now())
	if !found {
		a.Refuse("unknown or expired key")
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
			a.Finish(nil, 0, l.file, "the same confirmation again: nothing loaded; the first: "+postings.AsError(err).Error())
			s.sanctionsFailed(w, r, err)
			return
		}
		a.Finish(nil, 0, sanctionsTarget(version), "the same confirmation again: nothing loaded")
		http.Redirect(w, r, sanctionsPath+"?loaded="+strconv.FormatInt(version, 10), http.StatusSeeOther)
		return
	}
	// Detached from the request: a client gone mid-load must not leave
	// the key claimed with no result for the confirmation sent again. It
	// has its own bound instead. Two loads at once (two consoles, a CLI)
	// are serialised by LoadSanctions itself.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), sanctionsLoadTimeout)
	version, _, err := s.d.Sanctions.LoadSanctions(ctx, bytes.NewReader(l.data))
	cancel()
	s.pendingLoads.finish(l, version, err)
	if err != nil {
		a.Finish(err, 0, l.file, "")
		s.sanctionsFailed(w, r, err)
		return
	}
	a.Finish(nil, 0, sanctionsTarget(version), strconv.Itoa(l.count)+" entries from "+l.file)
	http.Redirect(w, r, sanctionsPath+"?loaded="+strconv.FormatInt(version, 10), http.StatusSeeOther)
}

// readSanctionsUpload checks an uploaded list as a stream and returns its
// bytes, its number of entries and its first sanctionsSampleMax entries.
func readSanctionsUpload(f io.Reader) ([]byte, int, []remittance.SanctionsEntry, error) {
	data, err := io.ReadAll(io.LimitReader(f, sanctionsUploadMax+1))
	if err != nil {
		return nil, 0, nil, postings.FieldErrorf("file", "cannot be read: %v", err)
	}
	if len(data) > sanctionsUploadMax {
		return nil, 0, nil, postings.FieldErrorf("file", "is larger than %d MiB; load a larger list with the CLI (gateway sanctions load)", sanctionsUploadMax>>20)
	}
	var sample []remittance.SanctionsEntry
	count, err := rules.ReadSanctionsList(bytes.NewReader(data), func(e rules.SanctionsEntry) error {
		if len(sample) < sanctionsSampleMax {
			sample = append(sample, remittance.SanctionsEntry{Name: e.Name, Country: e.Country, List: e.List, Ref: e.ID})
		}
		return nil
	})
	return data, count, sample, err
}

// sanctionsFailed answers a load that did not happen.
func (s *pages) sanctionsFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		w.Header().Set("Retry-After", "1")
		s.h.Fail(w, r, http.StatusServiceUnavailable, "The load is still running; open the sanctions page to see its result.")
		return
	}
	s.h.DomainError(w, r, err)
}
