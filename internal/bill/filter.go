package bill

import (
	"context"
	"database/sql"
	"strings"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The filtered bill (docs/api.md, "Bill", filters): the lines of a time
// range that have one of some kinds, one currency or one card, a page at a
// time or streamed.
//
// The lines of a time range are the bill_seq range [lo, hi] (bill.go); the
// lines of a filter are a subsequence of it, in bill_seq order. Why its pages
// never change: a line written later has a bill_seq above every existing one,
// so it can only be appended after the last match; the matches before it —
// and so every full page — stay as they are.
//
// Why page N costs about what page 1 costs. Without a card, bill_blocks
// (sql/0010) counts the lines of each block of billBlockLines bill sequence
// numbers per kind and currency. The matches of [lo, hi] are split into
// segments: the partial block lo falls in and the one hi falls in, counted
// line by line (at most billBlockLines lines each), and the whole blocks in
// between, counted by adding bill_blocks rows. The total is their sum; page
// N starts in the segment where the running sum passes (N−1)·size, and is
// read from that segment's first line, skipping fewer than billBlockLines
// matches. Every page reads the same block counts (for the total) and at
// most one block's lines more than page 1: no page walks the lines before
// it. With a card, the card's lines are one range of bill_lines_card_idx,
// read from the index alone; the total counts them, and a page skips at
// most that many index entries, so page N costs at most twice page 1.

// billBlockLines is the number of bill sequence numbers of a bill_blocks
// block (sql/0010_cardsbill.sql).
const billBlockLines = 1024

// Filter narrows the bill; a zero field does not filter. Kinds are
// checked by the caller (postings.Kind.Valid) and listed at most once.
type Filter struct {
	Kinds    []postings.Kind
	Currency string
	CardNo   string
}

// Empty reports whether the filter keeps every line.
func (f Filter) Empty() bool {
	return len(f.Kinds) == 0 && f.Currency == "" && f.CardNo == ""
}

// where is the filter as SQL conditions on bill_lines alias b, with its
// arguments: bound, never spliced.
func (f Filter) where() (string, []any) {
	var sb strings.Builder
	var args []any
	if len(f.Kinds) > 0 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		sb.WriteString(" and b.kind = any(?::text[])")
		args = append(args, pgdialect.Array(kinds))
	}
	if f.Currency != "" {
		sb.WriteString(" and b.currency = ?")
		args = append(args, f.Currency)
	}
	if f.CardNo != "" {
		sb.WriteString(" and b.card_no = ?")
		args = append(args, f.CardNo)
	}
	return sb.String(), args
}

// billSegment is a bill_seq range [first, last] holding n matches.
type billSegment struct {
	first, last, n int64
}

// FilteredRange is the matches of a filter in the lines of a time range:
// the range, the filter, the segments that hold matches, and their total.
type FilteredRange struct {
	Range
	Filter   Filter
	Matches  int64
	segments []billSegment
}

// FilteredPage is one page of a filtered bill.
type FilteredPage struct {
	FilteredRange
	Page, Size int
	Lines      []Line
}

// FilteredBill returns page page (from 1) of size lines (1 to PageMax)
// of the merchant's bill lines with from ≤ created_at < to that pass f, in
// bill_seq order, with their total. A page past the end is empty. Another
// merchant's card, or an unknown one, has no lines here.
func (s *Service) FilteredBill(ctx context.Context, merchant int64, r Range, f Filter, page, size int) (*FilteredPage, error) {
	if page < 1 {
		return nil, postings.FieldErrorf("page", "must be at least 1")
	}
	if size < 1 || size > PageMax {
		return nil, postings.FieldErrorf("size", "must be from 1 to %d", PageMax)
	}
	fr, err := s.FilteredBillRange(ctx, merchant, r, f)
	if err != nil {
		return nil, err
	}
	p := &FilteredPage{FilteredRange: fr, Page: page, Size: size, Lines: []Line{}}
	if fr.Matches == 0 || int64(page-1) > (fr.Matches-1)/int64(size) {
		return p, nil
	}
	skip := int64(page-1) * int64(size)
	for _, seg := range fr.segments {
		if skip < seg.n {
			p.Lines, err = s.filteredLines(ctx, merchant, f, seg.first, fr.Last, skip, int64(size))
			return p, err
		}
		skip -= seg.n
	}
	return p, nil
}

// FilteredBillRange counts the matches of f in r, by segment.
func (s *Service) FilteredBillRange(ctx context.Context, merchant int64, r Range, f Filter) (FilteredRange, error) {
	fr := FilteredRange{Range: r, Filter: f}
	if r.Total == 0 {
		return fr, nil
	}
	var err error
	if f.CardNo != "" {
		// One card: its lines are one range of bill_lines_card_idx.
		var n int64
		n, err = s.countLines(ctx, merchant, f, r.First, r.Last)
		fr.segments = []billSegment{{r.First, r.Last, n}}
	} else {
		fr.segments, err = s.blockSegments(ctx, merchant, r, f)
	}
	if err != nil {
		return FilteredRange{}, err
	}
	kept := fr.segments[:0]
	for _, seg := range fr.segments {
		if seg.n > 0 {
			fr.Matches += seg.n
			kept = append(kept, seg)
		}
	}
	fr.segments = kept
	return fr, nil
}

// blockOf is the bill_blocks block of a bill sequence number.
func blockOf(seq int64) int64 { return (seq - 1) / billBlockLines }

// blockSegments splits r into its partial first and last blocks, counted
// line by line, and the whole blocks in between, counted from bill_blocks.
func (s *Service) blockSegments(ctx context.Context, merchant int64, r Range, f Filter) ([]billSegment, error) {
	bLo, bHi := blockOf(r.First), blockOf(r.Last)
	if bLo == bHi {
		n, err := s.countLines(ctx, merchant, f, r.First, r.Last)
		return []billSegment{{r.First, r.Last, n}}, err
	}
	headLast := (bLo + 1) * billBlockLines
	tailFirst := bHi*billBlockLines + 1
	head, err := s.countLines(ctx, merchant, f, r.First, headLast)
	if err != nil {
		return nil, err
	}
	segs := []billSegment{{r.First, headLast, head}}
	if bHi-bLo > 1 {
		inner, err := s.blockCounts(ctx, merchant, f, bLo+1, bHi-1)
		if err != nil {
			return nil, err
		}
		segs = append(segs, inner...)
	}
	tail, err := s.countLines(ctx, merchant, f, tailFirst, r.Last)
	if err != nil {
		return nil, err
	}
	return append(segs, billSegment{tailFirst, r.Last, tail}), nil
}

// countLinesSQL counts the matches of a bill_seq range: a primary-key range
// (at most one block, or one card's index range).
const countLinesSQL = `select count(*) from bill_lines b where b.merchant_id = ? and b.bill_seq between ? and ?`

func (s *Service) countLines(ctx context.Context, merchant int64, f Filter, first, last int64) (int64, error) {
	where, args := f.where()
	var n int64
	err := s.l.DB().NewRaw(countLinesSQL+where, append([]any{merchant, first, last}, args...)...).Scan(ctx, &n)
	if err != nil {
		return 0, ledger.MapError(err)
	}
	return n, nil
}

// blockCountsSQL adds the counts of whole blocks: one range of
// bill_blocks_pkey per kind and currency the filter keeps.
const blockCountsSQL = `
	select b.block, sum(b.n)::bigint as n from bill_blocks b
	where b.merchant_id = ? and b.block between ? and ?%s
	group by b.block order by b.block`

func (s *Service) blockCounts(ctx context.Context, merchant int64, f Filter, first, last int64) ([]billSegment, error) {
	where, args := Filter{Kinds: f.Kinds, Currency: f.Currency}.where()
	var rows []struct {
		Block int64 `bun:"block"`
		N     int64 `bun:"n"`
	}
	q := strings.Replace(blockCountsSQL, "%s", where, 1)
	if err := s.l.DB().NewRaw(q, append([]any{merchant, first, last}, args...)...).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]billSegment, len(rows))
	for i, r := range rows {
		out[i] = billSegment{r.Block*billBlockLines + 1, (r.Block + 1) * billBlockLines, r.N}
	}
	return out, nil
}

// filteredLinesSQL reads matches from a bill_seq on, skipping some: the
// matches are found first, then each line's account is probed (billLinesSQL
// says why by a lateral "offset 0").
const filteredLinesSQL = `
	select b.bill_seq, b.merchant_seq, b.kind, b.amount, b.currency, b.balance_after, b.created_at,
	       b.card_no, b.tx_id, b.auth_id, a.type as account_type, a.card_no as account_card, r.related_to
	from (select b.* from bill_lines b
	      where b.merchant_id = ? and b.bill_seq between ? and ?%s
	      order by b.bill_seq offset ? limit ?) b
	cross join lateral (select type, card_no from accounts where id = b.account_id offset 0) a
	` + relatedToJoin + `
	order by b.bill_seq`

func (s *Service) filteredLines(ctx context.Context, merchant int64, f Filter, first, last, skip, limit int64) ([]Line, error) {
	where, args := f.where()
	q := strings.Replace(filteredLinesSQL, "%s", where, 1)
	all := append([]any{merchant, first, last}, args...)
	var rows []billReadRow
	if err := s.l.DB().NewRaw(q, append(all, skip, limit)...).Scan(ctx, &rows); err != nil && err != sql.ErrNoRows {
		return nil, ledger.MapError(err)
	}
	return billLinesOf(rows), nil
}

// FilteredBillStream calls fn with the matches of fr in bill_seq order, in
// batches of at most batch lines (1 to PageMax; others mean
// PageMax), each read by its own keyset query from the last line of the
// one before: memory stays bounded whatever the range.
func (s *Service) FilteredBillStream(ctx context.Context, merchant int64, fr FilteredRange, batch int, fn func([]Line) error) error {
	if batch < 1 || batch > PageMax {
		batch = PageMax
	}
	if fr.Matches == 0 {
		return nil
	}
	next := fr.segments[0].first
	for next <= fr.Last {
		lines, err := s.filteredLines(ctx, merchant, fr.Filter, next, fr.Last, 0, int64(batch))
		if err != nil {
			return err
		}
		if len(lines) == 0 {
			return nil
		}
		if err := fn(lines); err != nil {
			return err
		}
		if len(lines) < batch {
			return nil
		}
		next = lines[len(lines)-1].BillSeq + 1
	}
	return nil
}
