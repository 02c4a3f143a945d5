package console

import (
	"github.com/paygate/gateway/internal/console/host"

	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The auditor's pages: a merchant's journal by sequence with its postings
// and hashes, one entry's hash recomputed in front of the reader, audit
// verify run from the page, and the console's own audit trail.

const journalPageMax = 50

type journalData struct {
	ShopNo  string
	From    int64
	Entries []postings.Record
	Next    string
	Prev    string
}

// merchantOfQuery resolves ?shopNo=; nil with no error when none is given.
func (s *Server) merchantOfQuery(ctx context.Context, shop string) (*merchant.Merchant, error) {
	if shop == "" {
		return nil, nil
	}
	if len(shop) > 64 || !postings.IsRefText(shop) {
		return nil, postings.FieldErrorf("shopNo", "is not a shop number")
	}
	return s.cfg.Merchants.MerchantByShopNo(ctx, shop)
}

func (s *Server) journal(w http.ResponseWriter, r *http.Request, sess *session) {
	shop := r.URL.Query().Get("shopNo")
	from, err := host.QueryInt(r, "from", 1, 1<<62, 1)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	m, err := s.merchantOfQuery(r.Context(), shop)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	d := journalData{ShopNo: shop, From: int64(from)}
	if m != nil {
		es, err := s.cfg.Ledger.Entries(r.Context(), m.ID, int64(from), int64(from)+journalPageMax-1, journalPageMax)
		if err != nil {
			s.domainError(w, r, err)
			return
		}
		d.Entries = es
		if len(es) == journalPageMax {
			d.Next = "/audit/journal?shopNo=" + shop + "&from=" + strconv.FormatInt(int64(from)+journalPageMax, 10)
		}
		if from > 1 {
			d.Prev = "/audit/journal?shopNo=" + shop + "&from=" + strconv.FormatInt(max(1, int64(from)-journalPageMax), 10)
		}
	}
	s.render(w, r, http.StatusOK, "journal", "Journal", d)
}

type entryData struct {
	ShopNo     string
	Entry      postings.Record
	PrevStored string // the previous entry's stored hash ("" for the first)
	Canonical  string // hex of prev_hash ‖ canonical encoding: what is hashed
	Recomputed string
	HashOK     bool
	LinkOK     bool
}

// entry recomputes one entry's hash from its fields and the previous
// entry's stored hash, exactly as audit verify does (docs/ledger.md, "The
// hash chain"), and shows both.
func (s *Server) entry(w http.ResponseWriter, r *http.Request, sess *session) {
	shop := r.PathValue("shopNo")
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		s.notFound(w, r)
		return
	}
	m, err := s.merchantOfQuery(r.Context(), shop)
	if err != nil || m == nil {
		s.notFound(w, r)
		return
	}
	lo := max(1, seq-1)
	es, err := s.cfg.Ledger.Entries(r.Context(), m.ID, lo, seq, 2)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	if len(es) == 0 || es[len(es)-1].Seq != seq {
		s.notFound(w, r)
		return
	}
	e := es[len(es)-1]
	prev := postings.GenesisHash
	d := entryData{ShopNo: shop, Entry: e}
	if len(es) == 2 {
		prev = es[0].Hash
		d.PrevStored = prev.String()
	}
	h, buf := postings.ChainHashBuffer(nil, e.PrevHash, &e)
	d.Canonical = hex.EncodeToString(buf)
	d.Recomputed = h.String()
	d.HashOK = bytes.Equal(h[:], e.Hash[:])
	d.LinkOK = e.PrevHash == prev
	s.render(w, r, http.StatusOK, "entry", "Entry "+strconv.FormatInt(seq, 10), d)
}

type trailData struct {
	Entries    []auditEntry
	Next       string
	PendingFor string
}

const trailPageMax = 100

func (s *Server) trail(w http.ResponseWriter, r *http.Request, sess *session) {
	before, err := host.QueryInt(r, "before", 0, 1<<62, 0)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	es, err := s.store.AuditTrail(r.Context(), int64(before), trailPageMax)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	for i := range es {
		es[i].Shown = shownOutcome(es[i], s.now())
	}
	d := trailData{Entries: es, PendingFor: strconv.Itoa(int(auditPendingFor.Minutes())) + " minutes"}
	if len(es) == trailPageMax {
		d.Next = "/audit/trail?before=" + strconv.FormatInt(es[len(es)-1].ID, 10)
	}
	s.render(w, r, http.StatusOK, "trail", "Console audit trail", d)
}
