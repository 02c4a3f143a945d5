package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/gateway/postings"
)

// bankMatcher is one bank reconciliation's state between the file and the
// ledger.
type bankMatcher struct {
	fileRun
	rep      *BankReport
	src      BankSource
	period   Period
	merchant int64
	// named: "CUR:REF" → the first line that named it (a second is
	// duplicate_in_file). namedEntries: deposits a line was compared with
	// in another currency. invalidRefs: references of lines that could not
	// be read. None of these deposits is missing_in_file: a line already
	// speaks of it.
	named        map[string]int64
	namedEntries map[int64]bool
	invalidRefs  map[string]bool
}

func bankKey(cur, ref string) string { return cur + ":" + ref }

// screen decides what the file alone decides about a line: invalid,
// duplicate, value date outside the period. It reports whether the line
// goes on to the ledger.
func (m *bankMatcher) screen(row *bankRow, problem string) bool {
	item := BankItem{Line: row.line, ValueDate: row.valueDate, Reference: row.reference}
	if problem != "" {
		if row.reference != "" {
			m.invalidRefs[row.reference] = true
		}
		item.Category, item.Detail = CategoryInvalidRow, problem
		m.rep.add(item)
		return false
	}
	amount := row.amount
	item.FileAmount = &amount
	key := bankKey(row.amount.Currency.Code, row.reference)
	if prev := m.named[key]; prev != 0 {
		item.Category, item.Detail = CategoryDuplicateInFile, fmt.Sprintf("reference and currency already on line %d; this line is not matched", prev)
		m.rep.add(item)
		return false
	}
	m.named[key] = row.line
	m.rep.sum(row.amount).addFile(row.amount.Minor)
	if !m.period.contains(row.day) {
		item.Category = CategoryOutsidePeriod
		item.Detail = fmt.Sprintf("value date %s, outside the statement's period %s: not matched", row.valueDate, m.period)
		m.rep.add(item)
		return false
	}
	return true
}

// match compares a batch of lines with the merchant's deposits of the same
// references and with the records of earlier runs.
func (m *bankMatcher) match(ctx context.Context, rows []bankRow) error {
	if len(rows) == 0 {
		return nil
	}
	refs := make([]string, len(rows))
	for i, row := range rows {
		refs[i] = row.reference
	}
	found, err := m.src.DepositsByReference(ctx, m.merchant, refs)
	if err != nil {
		return err
	}
	byKey := map[string]*LedgerDeposit{}
	byRef := map[string]*LedgerDeposit{}
	var ids []int64
	for i := range found {
		d := &found[i]
		byKey[bankKey(d.Currency, d.Reference)], byRef[d.Reference] = d, d
		ids = append(ids, d.EntryID)
	}
	var claims map[int64]Claim
	if m.rec != nil {
		if claims, err = m.rec.Claims(ctx, KindBankDeposit, ids); err != nil {
			return err
		}
	}
	for _, row := range rows {
		d := byKey[bankKey(row.amount.Currency.Code, row.reference)]
		amount := row.amount
		item := BankItem{Line: row.line, ValueDate: row.valueDate, Reference: row.reference, FileAmount: &amount}
		if d == nil {
			item.Category, item.Detail = m.unmatched(row, byRef[row.reference], &item)
			m.rep.add(item)
			continue
		}
		item.describe(d)
		if category, detail := m.classify(row, d, claims); category != CategoryMatched {
			item.Category, item.Detail = category, detail
			m.rep.add(item)
			continue
		}
		m.rep.matchedRow(matchedItem{RecordedItem: RecordedItem{EntryID: d.EntryID, Line: row.line},
			amount: row.amount})
	}
	return nil
}

// unmatched is a line whose reference has no deposit in its currency: a
// deposit in another currency (currency_differs), or none (an extra line).
func (m *bankMatcher) unmatched(row bankRow, other *LedgerDeposit, item *BankItem) (string, string) {
	if other == nil {
		return CategoryMissingInLedger, fmt.Sprintf("no deposit of shop %s has the bank reference %s: money the bank received "+
			"that nobody deposited (gateway merchant deposit --bank-reference %s)", m.rep.ShopNo, row.reference, row.reference)
	}
	m.namedEntries[other.EntryID] = true
	item.describe(other)
	return CategoryCurrencyDiffers, fmt.Sprintf("currency differs: the bank has %s, the deposit with this reference is %s",
		row.amount, item.LedgerAmount)
}

// classify decides a line with a deposit of its reference and currency:
// a second claim first (the bank line or the deposit counted twice), then
// the amount, then the day the deposit was booked.
func (m *bankMatcher) classify(row bankRow, d *LedgerDeposit, claims map[int64]Claim) (string, string) {
	if c, ok := m.claimedBefore(claims, d.EntryID); ok {
		return CategoryAlreadyReconciled, claimedDetail(c)
	}
	if d.Amount != row.amount.Minor {
		diff := money(row.amount.Minor-d.Amount, row.amount.Currency) // both at most AmountMinorMax: no overflow
		return CategoryAmountDiffers, fmt.Sprintf("amount differs: the bank has %s, the deposit %s (bank − ledger = %s)",
			row.amount, money(d.Amount, row.amount.Currency), diff)
	}
	if booked := d.CreatedAt.UTC().Truncate(24 * time.Hour); !m.period.contains(booked) {
		return CategoryDateDiffers, fmt.Sprintf("the deposit was booked on %s, outside the statement's period %s",
			booked.Format(time.DateOnly), m.period)
	}
	return CategoryMatched, ""
}

// describe copies the deposit's identity into the item.
func (it *BankItem) describe(d *LedgerDeposit) {
	it.Seq = d.Seq
	ts := d.CreatedAt.UTC()
	it.BookedAt = &ts
	if cur, err := postings.LookupCurrency(d.Currency); err == nil {
		amount := money(d.Amount, cur)
		it.LedgerAmount = &amount
	}
}

// missingInFile pages through every deposit of the period: it sums the
// ledger's side of the totals and reports each deposit no line named. A
// file without lines while the ledger has deposits is empty_file too.
func (m *bankMatcher) missingInFile(ctx context.Context) error {
	read := func(ctx context.Context, from, to time.Time, after SettlementCursor, limit int) ([]LedgerDeposit, error) {
		return m.src.DepositsBetween(ctx, m.merchant, from, to, after, limit)
	}
	return ledgerSide(ctx, &m.rep.fileReport, m.period, read, (*LedgerDeposit).cursor, func(d *LedgerDeposit) {
		item := BankItem{Category: CategoryMissingInFile, Reference: d.Reference}
		item.describe(d)
		m.rep.addLedger(item.LedgerAmount)
		if m.named[bankKey(d.Currency, d.Reference)] != 0 || m.namedEntries[d.EntryID] || m.invalidRefs[d.Reference] {
			return
		}
		item.Detail = fmt.Sprintf("deposited on %s; the statement has no line for it", d.CreatedAt.UTC().Format(time.DateOnly))
		if d.Reference == "" {
			item.Detail += " (a deposit without a bank reference, from before references: it cannot be matched)"
		}
		m.rep.add(item)
	}, "statement has no lines", func(detail string) BankItem { return BankItem{Category: CategoryEmptyFile, Detail: detail} })
}

func (d *LedgerDeposit) cursor() SettlementCursor {
	return SettlementCursor{CreatedAt: d.CreatedAt, EntryID: d.EntryID}
}
