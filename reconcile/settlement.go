package reconcile

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// The categories of a settlement reconciliation. Every file row is exactly
// one of matched, amount_differs, missing_in_ledger, duplicate_in_file or
// invalid_row; missing_in_file is a ledger entry.
const (
	CategoryMatched         = "matched"           // same authorization, amount and currency
	CategoryAmountDiffers   = "amount_differs"    // same authorization, another amount or currency
	CategoryMissingInLedger = "missing_in_ledger" // no CARD_SETTLE entry for the row's authorization
	CategoryMissingInFile   = "missing_in_file"   // a CARD_SETTLE entry of the file's days that the file lacks
	CategoryDuplicateInFile = "duplicate_in_file" // a second row for one authorization
	CategoryInvalidRow      = "invalid_row"       // a row that cannot be read: named field, not matched
)

// settlementHeader is the settlement file's header, column by column.
var settlementHeader = []string{"message_id", "auth_id", "amount", "currency", "date"}

// Limits on a settlement file. rowsMax is a variable so that a test can
// lower it.
var settlementRowsMax int64 = 1_000_000

const (
	settlementLineBytesMax = 4096   // one line of the file
	settlementItemsMax     = 10_000 // the items a report lists; the rest are counted
	settlementBatch        = SettlementBatch
)

// SettlementReport is what a reconciliation found: counts per category,
// totals per currency, and each row or entry that needs a person.
type SettlementReport struct {
	Rows   int64             `json:"rows"`           // data rows read, the header excluded
	From   string            `json:"from,omitempty"` // the file's first date (YYYY-MM-DD)
	To     string            `json:"to,omitempty"`   // the file's last date, included
	Counts SettlementCounts  `json:"counts"`
	Totals []SettlementTotal `json:"totals"`
	// Items lists every row and entry that is not matched, in the order
	// found, up to settlementItemsMax; ItemsOmitted counts the rest.
	Items        []SettlementItem `json:"items"`
	ItemsOmitted int64            `json:"itemsOmitted"`

	totals map[string]*settlementSum
}

// SettlementCounts counts the rows and entries of each category.
type SettlementCounts struct {
	Matched         int64 `json:"matched"`
	AmountDiffers   int64 `json:"amount_differs"`
	MissingInLedger int64 `json:"missing_in_ledger"`
	MissingInFile   int64 `json:"missing_in_file"`
	DuplicateInFile int64 `json:"duplicate_in_file"`
	InvalidRow      int64 `json:"invalid_row"`
}

// SettlementTotal sums the file's readable, distinct rows of one currency
// and those of them that matched. Amounts are decimal numbers in the
// currency's units; a sum may exceed what one posting can hold, so it is
// computed exactly without a bound.
type SettlementTotal struct {
	Currency      string      `json:"currency"`
	FileRows      int64       `json:"fileRows"`
	FileAmount    json.Number `json:"fileAmount"`
	MatchedRows   int64       `json:"matchedRows"`
	MatchedAmount json.Number `json:"matchedAmount"`
}

// SettlementItem is one row of the file or one entry of the ledger that
// did not match, with what finance needs to chase it.
type SettlementItem struct {
	Category  string `json:"category"`
	Line      int64  `json:"line,omitempty"` // the file's line; 0 for missing_in_file
	MessageID string `json:"messageId,omitempty"`
	AuthID    string `json:"authId,omitempty"`
	Date      string `json:"date,omitempty"` // the file's date
	// The amounts as the file and the ledger (the network's amount kept
	// on the CARD_SETTLE entry) have them.
	FileAmount     *postings.Money `json:"fileAmount,omitempty"`
	FileCurrency   string          `json:"fileCurrency,omitempty"`
	LedgerAmount   *postings.Money `json:"ledgerAmount,omitempty"`
	LedgerCurrency string          `json:"ledgerCurrency,omitempty"`
	// The CARD_SETTLE entry, when there is one.
	ShopNo          string     `json:"shopNo,omitempty"`
	Seq             int64      `json:"seq,omitempty"`
	CardNo          string     `json:"cardNo,omitempty"`
	LedgerMessageID string     `json:"ledgerMessageId,omitempty"`
	LedgerTime      *time.Time `json:"ledgerTs,omitempty"`
	Detail          string     `json:"detail"`
}

// OK reports whether every row matched and the file lacks no entry.
func (r *SettlementReport) OK() bool {
	c := r.Counts
	return c.AmountDiffers+c.MissingInLedger+c.MissingInFile+c.DuplicateInFile+c.InvalidRow == 0
}

// FileError is a settlement file that cannot be reconciled at all: a wrong
// header, a line or a file beyond the limits, an unreadable stream.
type FileError struct {
	Line int64
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("settlement file, line %d: %s", e.Line, e.Msg)
	}
	return "settlement file: " + e.Msg
}

// settlementRow is one readable row of the file.
type settlementRow struct {
	line      int64
	messageID string
	authID    string
	amount    postings.Money
	date      string
}

// Settlement reconciles a card network settlement file against the
// journal's CARD_SETTLE entries. The file is CSV with the header
// message_id,auth_id,amount,currency,date: amount is a decimal in the
// currency's units, date is YYYY-MM-DD (UTC). Rows are matched by auth_id
// and compared, amount and currency, with the network's amount that the
// entry records (txn_amount, txn_currency); then every CARD_SETTLE entry
// created on the file's days (UTC) that no row names is missing_in_file.
//
// The file is streamed and the ledger read SettlementBatch rows at a
// time. What grows with the file is the set of its authorization ids
// (bounded by the row limit, 1,000,000) and the listed items (10,000).
// A *FileError means the file as a whole cannot be read.
func Settlement(ctx context.Context, src SettlementSource, file io.Reader) (*SettlementReport, error) {
	rep := &SettlementReport{Items: []SettlementItem{}, Totals: []SettlementTotal{}, totals: map[string]*settlementSum{}}
	lr := &lineLimitReader{r: file}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = len(settlementHeader)
	cr.ReuseRecord = true
	if err := readSettlementHeader(cr, lr); err != nil {
		return nil, err
	}
	seen := map[string]int64{} // authorization id → the line that named it first
	var pending []settlementRow
	var first, last string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, streamErr := recordLine(cr, rec, err)
		if streamErr != nil {
			return nil, lr.fileError(streamErr)
		}
		rep.Rows++
		if rep.Rows > settlementRowsMax {
			return nil, &FileError{Line: line, Msg: fmt.Sprintf("more than %d rows: split the file", settlementRowsMax)}
		}
		row, problem := parseSettlementRow(line, rec, err)
		if problem != "" {
			if postings.IsRefText(row.authID) && seen[row.authID] == 0 {
				seen[strings.Clone(row.authID)] = row.line // the row's entry is this row's matter, not missing_in_file
			}
			rep.add(SettlementItem{Category: CategoryInvalidRow, Line: row.line, MessageID: row.messageID,
				AuthID: row.authID, Date: row.date, Detail: problem})
			continue
		}
		if prev := seen[row.authID]; prev != 0 {
			rep.add(SettlementItem{Category: CategoryDuplicateInFile, Line: row.line, MessageID: row.messageID,
				AuthID: row.authID, Date: row.date, FileAmount: &row.amount, FileCurrency: row.amount.Currency.Code,
				Detail: fmt.Sprintf("authorization already on line %d; this row is not matched", prev)})
			continue
		}
		// A clone: the field shares its memory with the whole line.
		seen[strings.Clone(row.authID)] = row.line
		rep.sum(row.amount).addFile(row.amount.Minor)
		if first == "" || row.date < first {
			first = row.date
		}
		last = max(last, row.date)
		if pending = append(pending, row); len(pending) == settlementBatch {
			if err := rep.match(ctx, src, pending); err != nil {
				return nil, err
			}
			pending = pending[:0]
		}
	}
	if err := rep.match(ctx, src, pending); err != nil {
		return nil, err
	}
	rep.From, rep.To = first, last
	if first != "" {
		if err := rep.missingInFile(ctx, src, seen); err != nil {
			return nil, err
		}
	}
	rep.finishTotals()
	rep.sortItems()
	return rep, nil
}
