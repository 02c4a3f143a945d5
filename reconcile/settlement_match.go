package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// match compares a batch of rows with their CARD_SETTLE entries.
func (r *SettlementReport) match(ctx context.Context, src SettlementSource, rows []settlementRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.authID
	}
	found, err := src.SettlementsByAuth(ctx, ids)
	if err != nil {
		return err
	}
	if len(found) != len(rows) {
		return fmt.Errorf("reconcile: asked for %d authorizations, the ledger answered %d", len(rows), len(found))
	}
	for i, row := range rows {
		s := &found[i]
		item := SettlementItem{Line: row.line, MessageID: row.messageID, AuthID: row.authID, Date: row.date,
			FileAmount: &row.amount, FileCurrency: row.amount.Currency.Code}
		if !s.Found {
			item.Category, item.Detail = CategoryMissingInLedger, notSettledDetail(s.AuthStatus)
			r.add(item)
			continue
		}
		item.describeEntry(s)
		ledgerAmount, detail := compareSettlement(row.amount, s)
		item.LedgerAmount = ledgerAmount
		if detail != "" {
			item.Category, item.Detail = CategoryAmountDiffers, detail
			r.add(item)
			continue
		}
		r.Counts.Matched++
		r.sum(row.amount).addMatched(row.amount.Minor)
	}
	return nil
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
	cur, err := postings.LookupCurrency(s.TxnCurrency)
	if err != nil {
		return nil, fmt.Sprintf("the ledger entry does not record the network's currency (txn_currency %q)", truncateText(s.TxnCurrency, 8))
	}
	minor, err := strconv.ParseInt(s.TxnAmount, 10, 64)
	if err != nil || minor <= 0 {
		return nil, fmt.Sprintf("the ledger entry does not record the network's amount (txn_amount %q)", truncateText(s.TxnAmount, 24))
	}
	ledgerAmount := money(minor, cur)
	switch {
	case cur.Code != file.Currency.Code:
		return &ledgerAmount, fmt.Sprintf("currency differs: the file has %s, the ledger %s", file, ledgerAmount)
	case minor != file.Minor:
		diff := money(file.Minor-minor, cur) // both are at most AmountMinorMax: no overflow
		return &ledgerAmount, fmt.Sprintf("amount differs: the file has %s, the ledger %s (file − ledger = %s)", file, ledgerAmount, diff)
	}
	return &ledgerAmount, ""
}

// describeEntry copies the entry's identity into the item.
func (it *SettlementItem) describeEntry(s *LedgerSettlement) {
	it.ShopNo, it.Seq, it.CardNo, it.LedgerMessageID = s.ShopNo, s.Seq, s.CardNo, s.MessageID
	it.LedgerCurrency = s.TxnCurrency
	ts := s.CreatedAt
	it.LedgerTime = &ts
}

// missingInFile pages through the CARD_SETTLE entries of the file's days
// and reports those whose authorization no row named.
func (r *SettlementReport) missingInFile(ctx context.Context, src SettlementSource, seen map[string]int64) error {
	from, err := time.Parse(time.DateOnly, r.From)
	if err != nil {
		return err
	}
	to, err := time.Parse(time.DateOnly, r.To)
	if err != nil {
		return err
	}
	to = to.AddDate(0, 0, 1)
	var cursor SettlementCursor
	for {
		page, err := src.SettlementsBetween(ctx, from, to, cursor, settlementBatch)
		if err != nil {
			return err
		}
		for i := range page {
			s := &page[i]
			if seen[s.AuthID] != 0 {
				continue
			}
			item := SettlementItem{Category: CategoryMissingInFile, AuthID: s.AuthID,
				Detail: fmt.Sprintf("cleared in the ledger on %s; the file has no row for it", s.CreatedAt.Format(time.DateOnly))}
			item.describeEntry(s)
			if cur, err := postings.LookupCurrency(s.TxnCurrency); err == nil {
				if minor, err := strconv.ParseInt(s.TxnAmount, 10, 64); err == nil {
					m := money(minor, cur)
					item.LedgerAmount = &m
				}
			}
			r.add(item)
		}
		if len(page) < settlementBatch {
			return nil
		}
		last := page[len(page)-1]
		cursor = SettlementCursor{CreatedAt: last.CreatedAt, EntryID: last.EntryID}
	}
}
