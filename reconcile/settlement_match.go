package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// matcher is one reconciliation's state between the file and the ledger.
type matcher struct {
	keyedScreen // seen: authorization id → the line that named it first
	fileRun
	rep *SettlementReport
	src SettlementSource
}

// match compares a batch of rows with their CARD_SETTLE entries and with
// the records of earlier runs.
func (m *matcher) match(ctx context.Context, rows []settlementRow) error {
	k := keyedLookup[settlementRow, LedgerSettlement]{kind: KindCardClearing, what: "authorizations", id: func(r *settlementRow) string { return r.authID },
		read: m.src.SettlementsByAuth, entry: func(e *LedgerSettlement) (int64, bool) { return e.EntryID, e.Found && !e.Test }}
	return k.match(ctx, &m.fileRun, rows, func(row *settlementRow, e *LedgerSettlement, claims map[int64]Claim) {
		item := row.item("", "", true)
		if e.Found {
			item.describeEntry(e)
		} else {
			item.ShopNo = e.ShopNo // a test merchant's authorization names its shop
		}
		if category, detail := m.classify(*row, e, claims, &item); category != CategoryMatched {
			item.Category, item.Detail = category, detail
			m.rep.add(item)
			return
		}
		m.rep.matchedRow(matchedItem{RecordedItem: RecordedItem{EntryID: e.EntryID, Line: row.line}, amount: row.amount, id: row.authID})
	})
}

// classify decides a row the ledger has seen: the most serious finding
// first. A clearing billed by another file is double-billing whatever its
// amount; a test merchant's is not the network's at all.
func (m *matcher) classify(row settlementRow, s *LedgerSettlement, claims map[int64]Claim, item *SettlementItem) (string, string) {
	switch {
	case s.Test:
		return CategoryTestMerchant, fmt.Sprintf("a test merchant's authorization (shop %s): its clearings come from the sandbox, "+
			"never from the card network", s.ShopNo)
	case !s.Found:
		return CategoryMissingInLedger, notSettledDetail(s.AuthStatus)
	}
	if c, ok := m.claimedBefore(claims, s.EntryID); ok {
		return CategoryAlreadyReconciled, claimedDetail(c)
	}
	ledgerAmount, detail := compareSettlement(row.amount, s)
	item.LedgerAmount = ledgerAmount
	if detail != "" {
		return CategoryAmountDiffers, detail
	}
	if cleared := s.CreatedAt.UTC().Format(time.DateOnly); cleared != row.date {
		where := ""
		if !m.period.contains(s.CreatedAt.UTC().Truncate(24 * time.Hour)) {
			where = ", outside the file's period"
		}
		return CategoryDateDiffers, fmt.Sprintf("the file dates it %s, the ledger cleared it on %s%s", row.date, cleared, where)
	}
	return CategoryMatched, ""
}

// claimedDetail names the run that accounted for an entry before, and asks
// the question the kind of file raises: a clearing billed twice by the
// network, a refund credited twice, a remittance reported twice by the
// rail, a deposit on two bank statements.
func claimedDetail(c Claim) string {
	return fmt.Sprintf("already reconciled by %s (sha256 %s…), line %d, recorded %s by %s: %s",
		printable(c.Run.FileName), c.Run.FileSHA256[:16], c.Line, c.Run.RecordedAt.Format(time.RFC3339), printable(c.Run.Actor), twiceQuestion[c.Run.Kind])
}

var twiceQuestion = map[string]string{
	KindCardClearing:   "billed twice?",
	KindNetworkRefund:  "refunded twice?",
	KindRailRemittance: "reported twice?",
	KindBankDeposit:    "credited twice?",
}

// notSettledDetail says why an authorization has no CARD_SETTLE entry.
func notSettledDetail(status string) string {
	switch status {
	case "":
		return "no such authorization in the ledger"
	case AuthOpen:
		return "the authorization is open: the ledger has no clearing for it yet"
	case AuthReversed, AuthExpired:
		return fmt.Sprintf("the authorization was %s, never cleared", strings.ToLower(status))
	default:
		return fmt.Sprintf("the authorization is %s but the ledger has no CARD_SETTLE entry for it", status)
	}
}

// compareSettlement compares the file's amount with the network's amount
// recorded on the entry; detail is empty when they are equal.
func compareSettlement(file postings.Money, s *LedgerSettlement) (*postings.Money, string) {
	ledgerAmount, ok := networkAmount(s)
	if !ok {
		return nil, fmt.Sprintf("the ledger entry does not record the network's amount (txn_amount %q, txn_currency %q)",
			truncateText(s.TxnAmount, 24), truncateText(s.TxnCurrency, 8))
	}
	switch {
	case ledgerAmount.Currency.Code != file.Currency.Code:
		return &ledgerAmount, fmt.Sprintf("currency differs: the file has %s, the ledger %s", file, ledgerAmount)
	case ledgerAmount.Minor != file.Minor:
		diff := money(file.Minor-ledgerAmount.Minor, ledgerAmount.Currency) // both are at most AmountMinorMax: no overflow
		return &ledgerAmount, fmt.Sprintf("amount differs: the file has %s, the ledger %s (file − ledger = %s)", file, ledgerAmount, diff)
	}
	return &ledgerAmount, ""
}

// networkAmount is the network's amount the entry records.
func networkAmount(s *LedgerSettlement) (postings.Money, bool) {
	cur, err := postings.LookupCurrency(s.TxnCurrency)
	if err != nil {
		return postings.Money{}, false
	}
	minor, err := strconv.ParseInt(s.TxnAmount, 10, 64)
	if err != nil || minor <= 0 {
		return postings.Money{}, false
	}
	return money(minor, cur), true
}

// describeEntry copies the entry's identity into the item.
func (it *SettlementItem) describeEntry(s *LedgerSettlement) {
	it.ShopNo, it.Seq, it.CardNo, it.LedgerMessageID = s.ShopNo, s.Seq, s.CardNo, s.MessageID
	it.LedgerCurrency = s.TxnCurrency
	ts := s.CreatedAt
	it.LedgerTime = &ts
}

// missingInFile pages through every clearing of the period: it sums the
// ledger's side of the totals and reports each clearing no row named.
// A file without rows while the ledger has clearings is empty_file too.
func (m *matcher) missingInFile(ctx context.Context) error {
	return ledgerSide(ctx, &m.rep.fileReport, m.period, m.src.SettlementsBetween, (*LedgerSettlement).cursor, func(s *LedgerSettlement) {
		amount, ok := networkAmount(s)
		if ok {
			m.rep.sum(amount).addLedger(amount.Minor)
		}
		if m.seen[s.AuthID] != 0 {
			return
		}
		item := SettlementItem{Category: CategoryMissingInFile, AuthID: s.AuthID,
			Detail: fmt.Sprintf("cleared in the ledger on %s; the file has no row for it", s.CreatedAt.UTC().Format(time.DateOnly))}
		item.describeEntry(s)
		if ok {
			item.LedgerAmount = &amount
		}
		m.rep.add(item)
	}, "file has no rows", func(detail string) SettlementItem { return SettlementItem{Category: CategoryEmptyFile, Detail: detail} })
}

func (s *LedgerSettlement) cursor() SettlementCursor {
	return SettlementCursor{CreatedAt: s.CreatedAt, EntryID: s.EntryID}
}
