package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/gateway/postings"
)

// railMatcher is one rail report reconciliation's state.
type railMatcher struct {
	keyedScreen // seen: tx id → the line that named it first
	fileRun
	rep *RailReport
	src RailSource
}

// item is the row as an item of the report (valid: its amounts were read).
func (row *railRow) item(category, detail string, valid bool) RailItem {
	it := RailItem{Category: category, Line: row.line, TxID: row.txID, Status: row.status, Date: row.date, Detail: detail}
	if valid {
		amount, fee := row.amount, row.fee
		it.FileAmount, it.FileFee = &amount, &fee
	}
	return it
}

// screen decides what the file alone decides about a row.
func (m *railMatcher) screen(row *railRow, problem string) bool {
	return screenKeyed(&m.keyedScreen, m.rep.add, row.item, &row.txID, row.line, problem, row.amount, row.day, row.date)
}

// match compares a batch of rows with their entries and earlier runs.
func (m *railMatcher) match(ctx context.Context, rows []railRow) error {
	k := keyedLookup[railRow, RailEntry]{kind: KindRailRemittance, what: "remittances", id: func(r *railRow) string { return r.txID },
		read: m.src.RailEntriesByTx, entry: func(e *RailEntry) (int64, bool) { return e.EntryID, e.Found }}
	return k.match(ctx, &m.fileRun, rows, func(row *railRow, e *RailEntry, claims map[int64]Claim) {
		item := row.item("", "", true)
		item.describe(e)
		if category, detail := m.classify(*row, e, claims); category != CategoryMatched {
			item.Category, item.Detail = category, detail
			m.rep.add(item)
			return
		}
		m.rep.matchedRow(matchedItem{RecordedItem: RecordedItem{EntryID: e.EntryID, Line: row.line}, amount: row.amount})
	})
}

// railKind is the entry each outcome books.
var railKind = map[string]string{RailSettled: string(postings.KindRemitSettle), RailReturned: string(postings.KindRemitReturn)}

// classify decides a row: the most serious finding first.
func (m *railMatcher) classify(row railRow, e *RailEntry, claims map[int64]Claim) (string, string) {
	switch {
	case e.Status == "":
		return CategoryMissingInLedger, "no such remittance in the ledger"
	case !e.Found:
		return CategoryMissingInLedger, fmt.Sprintf("the remittance is %s: the ledger has no settlement or return for it", e.Status)
	}
	if c, ok := m.claimedBefore(claims, e.EntryID); ok {
		return CategoryAlreadyReconciled, claimedDetail(c)
	}
	cur, _ := postings.LookupCurrency(e.Currency)
	switch {
	case railKind[row.status] != e.Kind:
		return CategoryStatusDiffers, fmt.Sprintf("the rail says %s, the ledger booked %s", row.status, e.Kind)
	case cur.Code != row.amount.Currency.Code:
		return CategoryAmountDiffers, fmt.Sprintf("currency differs: the rail has %s, the ledger %s", row.amount, money(e.Amount, cur))
	case e.Amount != row.amount.Minor:
		return CategoryAmountDiffers, fmt.Sprintf("amount differs: the rail has %s, the ledger %s (rail − ledger = %s)",
			row.amount, money(e.Amount, cur), money(row.amount.Minor-e.Amount, cur))
	case e.Fee != row.fee.Minor:
		return CategoryFeeDiffers, fmt.Sprintf("fee differs: the rail has %s, the remittance's fee is %s", row.fee, money(e.Fee, cur))
	}
	if booked := e.CreatedAt.UTC().Format(time.DateOnly); booked != row.date {
		return CategoryDateDiffers, fmt.Sprintf("the rail dates it %s, the ledger booked it on %s", row.date, booked)
	}
	return CategoryMatched, ""
}

// describe copies the entry into the item.
func (it *RailItem) describe(e *RailEntry) {
	if !e.Found {
		return
	}
	it.LedgerKind, it.Seq = e.Kind, e.Seq
	ts := e.CreatedAt.UTC()
	it.LedgerTime = &ts
	if cur, err := postings.LookupCurrency(e.Currency); err == nil {
		amount, fee := money(e.Amount, cur), money(e.Fee, cur)
		it.LedgerAmount, it.LedgerFee = &amount, &fee
	}
}

// missingInFile pages through every entry of the period.
func (m *railMatcher) missingInFile(ctx context.Context) error {
	return ledgerSide(ctx, &m.rep.fileReport, m.period, m.src.RailEntriesBetween, (*RailEntry).cursor, func(e *RailEntry) {
		item := RailItem{Category: CategoryMissingInFile, TxID: e.TxID}
		item.describe(e)
		m.rep.addLedger(item.LedgerAmount)
		if m.seen[e.TxID] != 0 {
			return
		}
		item.Detail = fmt.Sprintf("%s booked on %s; the rail's report has no row for it", e.Kind, e.CreatedAt.UTC().Format(time.DateOnly))
		m.rep.add(item)
	}, "report has no rows", func(detail string) RailItem { return RailItem{Category: CategoryEmptyFile, Detail: detail} })
}

func (e *RailEntry) cursor() SettlementCursor {
	return SettlementCursor{CreatedAt: e.CreatedAt, EntryID: e.EntryID}
}
