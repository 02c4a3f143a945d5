package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/gateway/postings"
)

// refundMatcher is one refund file reconciliation's state.
type refundMatcher struct {
	keyedScreen // seen: message id → the line that named it first
	fileRun
	rep *RefundReport
	src RefundSource
}

// item is the row as an item of the report (valid: its amount was read).
func (row *refundRow) item(category, detail string, valid bool) RefundItem {
	it := RefundItem{Category: category, Line: row.line, MessageID: row.messageID, CardNo: row.cardNo, Date: row.date, Detail: detail}
	if valid {
		amount := row.amount
		it.FileAmount = &amount
	}
	return it
}

// screen decides what the file alone decides about a row.
func (m *refundMatcher) screen(row *refundRow, problem string) bool {
	return screenKeyed(&m.keyedScreen, m.rep.add, row.item, &row.messageID, row.line, problem, row.amount, row.day, row.date)
}

// match compares a batch of rows with their refunds and earlier runs.
func (m *refundMatcher) match(ctx context.Context, rows []refundRow) error {
	k := keyedLookup[refundRow, RefundEntry]{kind: KindNetworkRefund, what: "refunds", id: func(r *refundRow) string { return r.messageID },
		read: m.src.RefundsByMessage, entry: func(e *RefundEntry) (int64, bool) { return e.EntryID, e.Found && !e.Test }}
	return k.match(ctx, &m.fileRun, rows, func(row *refundRow, e *RefundEntry, claims map[int64]Claim) {
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

// classify decides a row: the most serious finding first. A refund
// claimed by another file is refunded twice whatever its amount; a test
// merchant's is not the network's at all.
func (m *refundMatcher) classify(row refundRow, e *RefundEntry, claims map[int64]Claim) (string, string) {
	switch {
	case !e.Found:
		return CategoryMissingInLedger, "no refund in the ledger carries this message id"
	case e.Test:
		return CategoryTestMerchant, fmt.Sprintf("a test merchant's refund (shop %s): its refunds come from the sandbox, "+
			"never from the card network", e.ShopNo)
	}
	if c, ok := m.claimedBefore(claims, e.EntryID); ok {
		return CategoryAlreadyReconciled, claimedDetail(c)
	}
	cur, _ := postings.LookupCurrency(e.Currency)
	switch {
	case cur.Code != row.amount.Currency.Code:
		return CategoryAmountDiffers, fmt.Sprintf("currency differs: the file has %s, the ledger %s", row.amount, money(e.Amount, cur))
	case e.Amount != row.amount.Minor:
		return CategoryAmountDiffers, fmt.Sprintf("amount differs: the file has %s, the ledger %s (file − ledger = %s)",
			row.amount, money(e.Amount, cur), money(row.amount.Minor-e.Amount, cur))
	case e.CardNo != row.cardNo:
		return CategoryCardDiffers, fmt.Sprintf("the file names card %s, the ledger refunded card %s", row.cardNo, e.CardNo)
	}
	if booked := e.CreatedAt.UTC().Format(time.DateOnly); booked != row.date {
		where := ""
		if !m.period.contains(e.CreatedAt.UTC().Truncate(24 * time.Hour)) {
			where = ", outside the file's period"
		}
		return CategoryDateDiffers, fmt.Sprintf("the file dates it %s, the ledger booked it on %s%s", row.date, booked, where)
	}
	return CategoryMatched, ""
}

// describe copies the refund into the item.
func (it *RefundItem) describe(e *RefundEntry) {
	if !e.Found {
		return
	}
	it.ShopNo, it.Seq, it.LedgerCardNo = e.ShopNo, e.Seq, e.CardNo
	ts := e.CreatedAt.UTC()
	it.LedgerTime = &ts
	if cur, err := postings.LookupCurrency(e.Currency); err == nil {
		amount := money(e.Amount, cur)
		it.LedgerAmount = &amount
	}
}

// missingInFile pages through every refund of the period: it sums the
// ledger's side of the totals and reports each refund no row named. A
// refund booked before refunds kept their message id cannot be named by
// any row, and says so.
func (m *refundMatcher) missingInFile(ctx context.Context) error {
	return ledgerSide(ctx, &m.rep.fileReport, m.period, m.src.RefundsBetween, (*RefundEntry).cursor, func(e *RefundEntry) {
		item := RefundItem{Category: CategoryMissingInFile, MessageID: e.MessageID}
		item.describe(e)
		m.rep.addLedger(item.LedgerAmount)
		booked := e.CreatedAt.UTC().Format(time.DateOnly)
		switch {
		case e.MessageID == "":
			item.Detail = fmt.Sprintf("booked on %s, before refunds kept the network's message id: no row can name it", booked)
		case m.seen[e.MessageID] != 0:
			return
		default:
			item.Detail = fmt.Sprintf("refunded in the ledger on %s; the file has no row for it", booked)
		}
		m.rep.add(item)
	}, "file has no rows", func(detail string) RefundItem { return RefundItem{Category: CategoryEmptyFile, Detail: detail} })
}

func (e *RefundEntry) cursor() SettlementCursor {
	return SettlementCursor{CreatedAt: e.CreatedAt, EntryID: e.EntryID}
}
