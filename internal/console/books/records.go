package books

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The books' signed records (issue 30; docs/console.md, "Checkpoints and
// closed periods"), read-only: the checkpoints (every merchant's journal
// head under one signed Merkle root), each downloadable as the file
// `gateway audit verify --checkpoint` takes, and the closed periods. The
// reads are internal/audit's (books_read.go); nothing here signs or
// closes: that is the CLI's and serve's, which hold the key.

// booksPage is the size of a page of either list.
const booksPage = 50

// beforeCursor reads the lists' keyset cursor: the last id shown, absent
// for the first page. ok is false after answering 400 naming it.
func (s *pages) beforeCursor(w http.ResponseWriter, r *http.Request) (before int64, ok bool) {
	v := r.URL.Query().Get("before")
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		s.h.Fail(w, r, http.StatusBadRequest, "before: must be an id, 1 or more")
		return 0, false
	}
	return n, true
}

// listPage is a page of either list: its rows and the cursor of the page
// after it, 0 when there is none.
type listPage[T any] struct {
	Rows []T
	Next int64
}

// add appends the row of id, the last so far of a page read n rows long:
// the next page starts before it unless the page was not full.
func (p *listPage[T]) add(row T, n int, id int64) {
	p.Rows = append(p.Rows, row)
	p.Next = 0
	if n >= booksPage {
		p.Next = id
	}
}

func (s *pages) checkpoints(w http.ResponseWriter, r *http.Request, u *host.User) {
	before, ok := s.beforeCursor(w, r)
	if !ok {
		return
	}
	cps, err := s.d.Audit.Checkpoints(r.Context(), before, booksPage)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	var d listPage[checkpointRow]
	for _, c := range cps {
		d.add(checkpointRow{StoredCheckpoint: c, RootShort: shortHex(c.Root), SigShort: shortHex(c.Signature)}, len(cps), c.ID)
	}
	s.h.Render(w, r, http.StatusOK, "checkpoints", "Checkpoints", d)
}

// checkpointRow is a checkpoint as the page lists it.
type checkpointRow struct {
	audit.StoredCheckpoint
	RootShort, SigShort string
}

// shortHex is a hash or a signature in short form: its first 8 and last 4
// digits, as the audit reports shorten hashes.
func shortHex(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:8] + "…" + h[len(h)-4:]
}

// checkpointFile answers the stored checkpoint as the JSON file the CLI's
// audit checkpoint printed: the same encoding, byte for byte, so that the
// download is what audit verify --checkpoint reads.
func (s *pages) checkpointFile(w http.ResponseWriter, r *http.Request, u *host.User) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.h.NotFound(w, r)
		return
	}
	c, err := s.d.Audit.CheckpointByID(r.Context(), id)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", "attachment; filename="+CheckpointFileName(id))
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

// CheckpointFileName is the download's name: checkpoint-<id>.json.
func CheckpointFileName(id int64) string { return "checkpoint-" + strconv.FormatInt(id, 10) + ".json" }

type closesData struct {
	House  bool   // the house's view: every merchant's, with a filter
	ShopNo string // the filter as typed
	Error  string
	listPage[closeRow]
}

// closes lists the closed periods: a merchant's admin and finance users
// their own merchant's only (taken from the session; a shopNo in the URL
// is never read for them), the house's every merchant's or one's.
func (s *pages) closes(w http.ResponseWriter, r *http.Request, u *host.User) {
	before, ok := s.beforeCursor(w, r)
	if !ok {
		return
	}
	d := closesData{House: u.House}
	m := u.MerchantID
	if d.House {
		d.ShopNo = r.URL.Query().Get("shopNo")
		if d.ShopNo != "" {
			mm, msg, err := s.shopFilter(r, d.ShopNo)
			switch {
			case err != nil:
				s.h.DomainError(w, r, err)
				return
			case msg != "":
				d.Error = msg
				s.h.Render(w, r, http.StatusBadRequest, "closes", "Closed periods", d)
				return
			}
			m = mm.ID
		}
	}
	cs, err := s.d.Audit.PeriodCloses(r.Context(), m, before, booksPage)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	shops := shopNames{s: s, r: r}
	for _, c := range cs {
		shop, err := shops.of(c.Merchant)
		if err != nil {
			s.h.DomainError(w, r, err)
			return
		}
		d.add(closeRow{StoredClose: c, ShopNo: shop, HashShort: shortHex(c.HeadHash)}, len(cs), c.ID)
	}
	s.h.Render(w, r, http.StatusOK, "closes", "Closed periods", d)
}

// closeRow is a closed period as the page lists it.
type closeRow struct {
	audit.StoredClose
	ShopNo, HashShort string
}

// shopFilter reads a house page's shopNo filter: the merchant, or the
// refusal naming the field (the reader typed it: an unknown shop is said
// so, as on the audit statement page).
func (s *pages) shopFilter(r *http.Request, shop string) (*merchant.Merchant, string, error) {
	if len(shop) > 64 || !postings.IsRefText(shop) {
		return nil, "shopNo: is not a shop number", nil
	}
	m, err := s.d.Merchants.MerchantByShopNo(r.Context(), shop)
	switch {
	case postings.ErrorCode(err) == postings.ENOTFOUND:
		return nil, "shopNo: no merchant has the shop number " + strconv.Quote(host.Clip(shop, 64)), nil
	case err != nil:
		return nil, "", err
	}
	return m, "", nil
}

// shopNames looks up the shop numbers of a page's merchants, each once.
type shopNames struct {
	s    *pages
	r    *http.Request
	seen map[int64]string
}

func (n *shopNames) of(id int64) (string, error) {
	if shop, ok := n.seen[id]; ok {
		return shop, nil
	}
	m, err := n.s.d.Merchants.MerchantByID(n.r.Context(), id)
	if err != nil {
		return "", err
	}
	if n.seen == nil {
		n.seen = map[int64]string{}
	}
	n.seen[id] = m.ShopNo
	return m.ShopNo, nil
}
