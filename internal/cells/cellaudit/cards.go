package cellaudit

import (
	"bytes"
	"context"
	"fmt"

	"github.com/paygate/gateway/internal/cells"
)

// The PAN fingerprints across cells, compared without holding them all:
// each cell's cards are read in fingerprint order, a page at a time, and
// the cells' ordered streams are merged (a k-way merge), so that equal
// fingerprints meet at the heads of the streams. Memory is a page per
// cell, whatever the number of cards (before: every card of every cell in
// one map, some hundred bytes a card).

// cardPage is how many cards one read of a cell returns. A variable for
// the test that pages through a handful of cards.
var cardPage = 1000

// card is one card's PAN fingerprint in a cell.
type card struct {
	CardNo      string `bun:"card_no"`
	MerchantID  int64  `bun:"merchant_id"`
	Fingerprint []byte `bun:"pan_fingerprint"`
}

// The pages: keyset on the fingerprint, which is unique in a cell
// (cards_pan_fingerprint_key, whose index gives the order), so that a page
// starts where the last ended and no card is read twice or skipped.
const (
	cardsFirst = "select card_no, merchant_id, pan_fingerprint from cards order by pan_fingerprint limit ?"
	cardsAfter = "select card_no, merchant_id, pan_fingerprint from cards where pan_fingerprint > ? order by pan_fingerprint limit ?"
)

// cardStream is one cell's cards in fingerprint order, one page held.
type cardStream struct {
	cell Cell
	page []card
	pos  int
	last []byte // the last fingerprint read; nil before the first page
	done bool   // a short page was the last
}

// head is the stream's current card, nil at its end; it reads the next
// page when the one held is used up.
func (s *cardStream) head(ctx context.Context) (*card, error) {
	if s.pos < len(s.page) {
		return &s.page[s.pos], nil
	}
	if s.done {
		return nil, nil
	}
	s.page, s.pos = nil, 0 // a new page: last still points into the old one
	var err error
	if s.last == nil {
		err = s.cell.DB.NewRaw(cardsFirst, cardPage).Scan(ctx, &s.page)
	} else {
		err = s.cell.DB.NewRaw(cardsAfter, s.last, cardPage).Scan(ctx, &s.page)
	}
	if err != nil {
		return nil, fmt.Errorf("cell %s: cards: %w", s.cell.Name, err)
	}
	if pageHeld != nil {
		pageHeld(s.cell.Name, len(s.page))
	}
	s.done = len(s.page) < cardPage
	if len(s.page) == 0 {
		return nil, nil
	}
	s.last = s.page[len(s.page)-1].Fingerprint
	return &s.page[0], nil
}

// pageHeld, when set (tests), is told the size of every page read.
var pageHeld func(cell string, n int)

// duplicateCards: no PAN fingerprint in two cells, but for a moving
// merchant's own cards. The first card of a fingerprint is the one of the
// earliest cell (cs's order), and every other card of it is compared with
// that one, as when the cells were read whole one after the other.
func duplicateCards(ctx context.Context, byID map[int64]cells.Entry, cs []Cell, rows map[string]cellRows) ([]Problem, error) {
	streams := make([]*cardStream, len(cs))
	for i, c := range cs {
		streams[i] = &cardStream{cell: c}
	}
	var ps []Problem
	heads := make([]*card, len(cs))
	for {
		// The smallest fingerprint at the streams' heads: cells are few,
		// so a scan of the heads is as good as a heap.
		var low []byte
		for i, s := range streams {
			h, err := s.head(ctx)
			if err != nil {
				return nil, err
			}
			heads[i] = h
			if h != nil && (low == nil || bytes.Compare(h.Fingerprint, low) < 0) {
				low = h.Fingerprint
			}
		}
		if low == nil {
			return ps, nil
		}
		low = bytes.Clone(low) // the page it points into may be read over
		var first *card
		firstCell := ""
		for i, h := range heads {
			if h == nil || !bytes.Equal(h.Fingerprint, low) {
				continue
			}
			streams[i].pos++ // each cell has a fingerprint once at most
			k, cell := *h, cs[i].Name
			if first == nil {
				first, firstCell = &k, cell
				continue
			}
			if first.MerchantID == k.MerchantID && (byID[k.MerchantID].State == cells.StateMoving ||
				rows[firstCell].mayHold(k.MerchantID) || rows[cell].mayHold(k.MerchantID)) {
				continue // the same card, in both cells while its merchant moves
			}
			ps = append(ps, Problem{Check: CheckDuplicate, Cell: cell,
				Detail: fmt.Sprintf("a PAN fingerprint is in two cells: card %s of merchant %d in %s, card %s of merchant %d in %s",
					first.CardNo, first.MerchantID, firstCell, k.CardNo, k.MerchantID, cell)})
		}
	}
}
