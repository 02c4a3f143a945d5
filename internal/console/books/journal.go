package books

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The auditor's journal: a merchant's entries by sequence with their
// postings and hashes, and one entry's hash recomputed in front of the
// reader.

const journalPageMax = 50

type journalData struct {
	ShopNo  string
	From    int64
	Entries []postings.Record
	Next    string
	Prev    string
}

// merchantOfQuery resolves ?shopNo=; nil with no error when none is given.
func (s *pages) merchantOfQuery(ctx context.Context, shop string) (*merchant.Merchant, error) {
	return MerchantOfQuery(ctx, s.d.Merchants, shop)
}

// MerchantOfQuery resolves a shop number given to a house page (?shopNo=,
// the verify form's); nil with no error when none is given, EINVALID
// naming shopNo when it cannot be one. The console's audit statement page
// reads its shop number with it too.
func MerchantOfQuery(ctx context.Context, ms Merchants, shop string) (*merchant.Merchant, error) {
	if shop == "" {
		return nil, nil
	}
	if len(shop) > 64 || !postings.IsRefText(shop) {
		return nil, postings.FieldErrorf("shopNo", "is not a shop number")
	}
	return ms.MerchantByShopNo(ctx, shop)
}

func (s *pages) journal(w http.ResponseWriter, r *http.Request, u *host.User) {
	shop := r.URL.Query().Get("shopNo")
	from, err := host.QueryInt(r, "from", 1, 1<<62, 1)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	m, err := s.merchantOfQuery(r.Context(), shop)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	d := journalData{ShopNo: shop, From: int64(from)}
	if m != nil {
		es, err := s.d.Ledger.Entries(r.Context(), m.ID, int64(from), int64(from)+journalPageMax-1, journalPageMax)
		if err != nil {
			s.h.DomainError(w, r, err)
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
	s.h.Render(w, r, http.StatusOK, "journal", "Journal", d)
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
func (s *pages) entry(w http.ResponseWriter, r *http.Request, u *host.User) {
	shop := r.PathValue("shopNo")
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		s.h.NotFound(w, r)
		return
	}
	m, err := s.merchantOfQuery(r.Context(), shop)
	if err != nil || m == nil {
		s.h.NotFound(w, r)
		return
	}
	lo := max(1, seq-1)
	es, err := s.d.Ledger.Entries(r.Context(), m.ID, lo, seq, 2)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	if len(es) == 0 || es[len(es)-1].Seq != seq {
		s.h.NotFound(w, r)
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
	s.h.Render(w, r, http.StatusOK, "entry", "Entry "+strconv.FormatInt(seq, 10), d)
}
