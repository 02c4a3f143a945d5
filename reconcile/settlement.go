package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/postings"
)

// The categories of a settlement reconciliation. Every file row is exactly
// one of matched, amount_differs, date_differs, outside_period,
// already_reconciled, test_merchant, missing_in_ledger, duplicate_in_file or
// invalid_row; missing_in_file is a ledger clearing, empty_file the file.
const (
	CategoryMatched           = "matched"            // same authorization, amount, currency and day, not claimed before
	CategoryAmountDiffers     = "amount_differs"     // same authorization, another amount or currency
	CategoryDateDiffers       = "date_differs"       // the row's date is not the day the ledger cleared it
	CategoryOutsidePeriod     = "outside_period"     // the row's date is not a day of the file's period
	CategoryAlreadyReconciled = "already_reconciled" // another file accounted for the clearing: billed twice
	CategoryTestMerchant      = "test_merchant"      // a test merchant's authorization: never the network's
	CategoryMissingInLedger   = "missing_in_ledger"  // no CARD_SETTLE entry for the row's authorization
	CategoryMissingInFile     = "missing_in_file"    // a clearing of the period that the file lacks
	CategoryDuplicateInFile   = "duplicate_in_file"  // a second row for one authorization
	CategoryInvalidRow        = "invalid_row"        // a row that cannot be read: named field, not matched
	CategoryEmptyFile         = "empty_file"         // no rows, while the ledger has clearings in the period
)

// settlementHeader is the settlement file's header, column by column.
var settlementHeader = []string{"message_id", "auth_id", "amount", "currency", "date"}

// Limits on a settlement file. rowsMax is a variable so that a test can
// lower it.
var settlementRowsMax int64 = 1_000_000

const (
	settlementItemsMax = 10_000 // the items a report lists; the rest are counted
	settlementBatch    = SettlementBatch
)

// SettlementReport is what a reconciliation found: the file and its
// period, totals per currency, counts per category, each row or clearing
// that needs a person, what was recorded, and the verdict (fileSide,
// fileRecord).
type SettlementReport struct {
	File SettlementFile `json:"file"`
	fileReport[SettlementItem, SettlementCounts]
}

// SettlementFile names the file reconciled.
type SettlementFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// SettlementCounts counts the rows and clearings of each category,
// under its JSON name (categoriesOf: the text report and the counting
// read the fields by it; matched first).
type SettlementCounts struct {
	Matched           int64 `json:"matched"`
	AmountDiffers     int64 `json:"amount_differs"`
	DateDiffers       int64 `json:"date_differs"`
	OutsidePeriod     int64 `json:"outside_period"`
	AlreadyReconciled int64 `json:"already_reconciled"`
	TestMerchant      int64 `json:"test_merchant"`
	MissingInLedger   int64 `json:"missing_in_ledger"`
	MissingInFile     int64 `json:"missing_in_file"`
	DuplicateInFile   int64 `json:"duplicate_in_file"`
	InvalidRow        int64 `json:"invalid_row"`
	EmptyFile         int64 `json:"empty_file"`
}

// ToAct is every count but matched.
func (c SettlementCounts) ToAct() int64 { return toAct(categoriesOf(&c)) }

// SettlementTotal is one currency's totals, file against ledger: the
// file's readable, distinct rows; the ledger's clearings of the period (in
// the network's amounts, as the file has them); the rows that matched.
// Amounts are exact decimals in the currency's units, summed without a
// bound.
type SettlementTotal struct {
	Currency      string      `json:"currency"`
	FileRows      int64       `json:"fileRows"`
	FileAmount    json.Number `json:"fileAmount"`
	LedgerRows    int64       `json:"ledgerRows"`
	LedgerAmount  json.Number `json:"ledgerAmount"`
	Difference    json.Number `json:"difference"` // file − ledger
	MatchedRows   int64       `json:"matchedRows"`
	MatchedAmount json.Number `json:"matchedAmount"`
}

// SettlementItem is one row of the file or one clearing of the ledger that
// did not match, with what finance needs to chase it.
type SettlementItem struct {
	Category  string `json:"category"`
	Line      int64  `json:"line,omitempty"` // the file's line; 0 for missing_in_file and empty_file
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

// FileError is input that cannot be reconciled at all: a wrong header or
// period, a line or a file beyond the limits, a byte that is not UTF-8, an
// unreadable stream. Its verdict is UNUSABLE, exit status 2.
type FileError struct {
	Line int64
	Msg  string
	What string // the kind of file, as the message names it; "" is a settlement file
}

func (e *FileError) Error() string {
	what := e.What
	if what == "" {
		what = "settlement file"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s, line %d: %s", what, e.Line, e.Msg)
	}
	return what + ": " + e.Msg
}

// settlementRow is one readable row of the file.
type settlementRow struct {
	line      int64
	messageID string
	authID    string
	amount    postings.Money
	date      string
	day       time.Time
}

// SettlementInput is a settlement file to reconcile.
type SettlementInput struct {
	// File is read twice: once for its SHA-256, which names the run, then
	// to match it.
	File io.ReadSeeker
	Name string // the file's name, as recorded and shown
	// Period is the caller's (--day, --from/--to); zero when the file
	// states its own (settlement_period.go). Both: they must agree.
	Period Period
	Actor  string // who reconciles, as recorded: "cli:alice", "console:aldo.auditor"
}

// Settlement reconciles a card network settlement file against the
// journal's CARD_SETTLE entries of the file's period (docs/audit.md, "gateway
// reconcile settlement"). Rows are matched by auth_id with the network's
// amount that the entry records (txn_amount, txn_currency) and with the
// day the ledger cleared it; every clearing of the period that no row names
// is missing_in_file; a clearing that another file accounted for is
// already_reconciled. A report whose verdict is MATCHED is recorded in rec
// (records.go) unless the same file was; rec nil records and reads nothing.
//
// The file is streamed and the ledger read SettlementBatch rows at a time.
// What grows with the file is the set of its authorization ids and of its
// matched clearings (bounded by the row limit, 1,000,000) and the listed
// items (10,000). A *FileError means the input as a whole cannot be read.
func Settlement(ctx context.Context, src SettlementSource, rec *Records, in SettlementInput) (*SettlementReport, error) {
	sum, p, period, err := openFile(in.File, settlementHeader, in.Period)
	if err != nil {
		return nil, err
	}
	rep := &SettlementReport{File: SettlementFile{Name: in.Name, SHA256: hex.EncodeToString(sum)},
		fileReport: newFileReport[SettlementItem, SettlementCounts](period, &settlementSpec)}
	m := &matcher{rep: rep, src: src, fileRun: fileRun{rec: rec},
		keyedScreen: newKeyedScreen(period, &rep.currencyTotals, "file", "authorization")}
	if err := reconcileFile(ctx, &m.fileRun, p, sum, in.Name, in.Actor, parseSettlementRow, m, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// fileSHA256 hashes the whole file and rewinds it.
func fileSHA256(f io.ReadSeeker) ([]byte, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, &FileError{Msg: err.Error()}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, &FileError{Msg: err.Error()}
	}
	return h.Sum(nil), nil
}

// screen handles what the file alone decides about a row (keyedScreen):
// invalid, duplicate, outside the period. It reports whether the row goes
// item is the row as an item of the report (valid: its amount was read).
func (row *settlementRow) item(category, detail string, valid bool) SettlementItem {
	it := SettlementItem{Category: category, Line: row.line, MessageID: row.messageID, AuthID: row.authID, Date: row.date, Detail: detail}
	if valid {
		amount := row.amount
		it.FileAmount, it.FileCurrency = &amount, amount.Currency.Code
	}
	return it
}

// on to the ledger, with its authorization id the seen map's copy.
func (m *matcher) screen(row *settlementRow, problem string) bool {
	return screenKeyed(&m.keyedScreen, m.rep.add, row.item, &row.authID, row.line, problem, row.amount, row.day, row.date)
}
