package reconcile

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/postings"
)

// The rail's settlement report (docs/finance.md, "Rail settlement report")
// against the journal's REMIT_SETTLE and REMIT_RETURN entries, with the
// settlement file's discipline: a stated period, every such entry of it on
// the ledger's side, one category per finding, totals first, verdict
// last, a matched report recorded (kind rail_remittance) so that a second
// claim on a remittance's outcome is caught.

// KindRailRemittance is a rail's settlement report against REMIT_SETTLE
// and REMIT_RETURN entries.
const KindRailRemittance = "rail_remittance"

// The rail report's own categories; the others are the settlement file's.
const (
	CategoryStatusDiffers = "status_differs" // the rail says SETTLED, the ledger RETURNED, or the reverse
	CategoryFeeDiffers    = "fee_differs"    // the remittance's fee is another
)

// The outcomes a rail reports.
const (
	RailSettled  = "SETTLED"
	RailReturned = "RETURNED"
)

var railHeader = []string{"tx_id", "status", "amount", "fee", "currency", "date"}

// RailSource is the remittances the rail carried to an end, as the
// journal has them (internal/app/services adapts internal/remittance).
type RailSource interface {
	// RailEntriesByTx returns, for each tx id in order, its REMIT_SETTLE
	// or REMIT_RETURN entry (Found) and the remittance's status.
	RailEntriesByTx(ctx context.Context, txIDs []string) ([]RailEntry, error)
	// RailEntriesBetween pages through those entries created in [from, to)
	// in (CreatedAt, EntryID) order after the cursor, at most limit.
	RailEntriesBetween(ctx context.Context, from, to time.Time, after SettlementCursor, limit int) ([]RailEntry, error)
}

// RailEntry is a remittance's end as the journal has it. A screening
// rejection never reached the rail and is not one.
type RailEntry struct {
	TxID      string
	Found     bool
	Status    string // the remittance's status; "" when there is no such remittance
	EntryID   int64
	Merchant  int64
	Seq       int64
	Kind      string // REMIT_SETTLE or REMIT_RETURN
	Amount    int64
	Fee       int64
	Currency  string
	CreatedAt time.Time
}

// RailInput is a rail report to reconcile.
type RailInput struct {
	File   io.ReadSeeker
	Name   string
	Period Period
	Actor  string
}

// RailReport is what a rail report reconciliation found.
type RailReport struct {
	File SettlementFile `json:"file"`
	fileReport[RailItem, RailCounts]
}

// RailCounts counts the rows and entries of each category,
// under its JSON name (categoriesOf: the text report and the counting
// read the fields by it; matched first).
type RailCounts struct {
	Matched           int64 `json:"matched"`
	StatusDiffers     int64 `json:"status_differs"`
	AmountDiffers     int64 `json:"amount_differs"`
	FeeDiffers        int64 `json:"fee_differs"`
	DateDiffers       int64 `json:"date_differs"`
	OutsidePeriod     int64 `json:"outside_period"`
	AlreadyReconciled int64 `json:"already_reconciled"`
	MissingInLedger   int64 `json:"missing_in_ledger"`
	MissingInFile     int64 `json:"missing_in_file"`
	DuplicateInFile   int64 `json:"duplicate_in_file"`
	InvalidRow        int64 `json:"invalid_row"`
	EmptyFile         int64 `json:"empty_file"`
}

// ToAct is every count but matched.
func (c RailCounts) ToAct() int64 { return toAct(categoriesOf(&c)) }

// RailItem is one row or entry that did not match.
type RailItem struct {
	Category     string          `json:"category"`
	Line         int64           `json:"line,omitempty"`
	TxID         string          `json:"txId,omitempty"`
	Status       string          `json:"status,omitempty"` // the file's
	Date         string          `json:"date,omitempty"`
	FileAmount   *postings.Money `json:"fileAmount,omitempty"`
	FileFee      *postings.Money `json:"fileFee,omitempty"`
	LedgerKind   string          `json:"ledgerKind,omitempty"`
	LedgerAmount *postings.Money `json:"ledgerAmount,omitempty"`
	LedgerFee    *postings.Money `json:"ledgerFee,omitempty"`
	Seq          int64           `json:"seq,omitempty"`
	LedgerTime   *time.Time      `json:"ledgerTs,omitempty"`
	Detail       string          `json:"detail"`
}

type railRow struct {
	line         int64
	txID, status string
	amount, fee  postings.Money
	date         string
	day          time.Time
}

// Rail reconciles the rail's settlement report against the journal. A
// report whose verdict is MATCHED is recorded in rec unless the same file
// was; rec nil records and reads nothing. A *FileError is exit status 2.
func Rail(ctx context.Context, src RailSource, rec *Records, in RailInput) (*RailReport, error) {
	rep, err := rail(ctx, src, rec, in)
	return rep, nameFileError(err, "rail report")
}

func rail(ctx context.Context, src RailSource, rec *Records, in RailInput) (*RailReport, error) {
	sum, p, period, err := openFile(in.File, railHeader, in.Period)
	if err != nil {
		return nil, err
	}
	rep := &RailReport{File: SettlementFile{Name: in.Name, SHA256: hex.EncodeToString(sum)},
		fileReport: newFileReport[RailItem, RailCounts](period, &railSpec)}
	m := &railMatcher{rep: rep, src: src, fileRun: fileRun{rec: rec},
		keyedScreen: newKeyedScreen(period, &rep.currencyTotals, "report", "remittance")}
	return rep, reconcileFile(ctx, &m.fileRun, p, sum, in.Name, in.Actor, parseRailRow, m, rep)
}

// parseRailRow reads one row; problem is empty when it is valid. A field
// that is not what it should be is never echoed raw.
func parseRailRow(line int64, rec []string, readErr error) (row railRow, problem string) {
	row.line = line
	if problem = trimCells(rec, readErr, railHeader); problem != "" {
		return row, problem
	}
	if !postings.IsRefText(rec[0]) {
		return row, "tx_id: must be 1 to 64 characters of [A-Za-z0-9_.:-] (the remittance's txId)"
	}
	row.txID = rec[0]
	if rec[1] != RailSettled && rec[1] != RailReturned {
		return row, "status: must be SETTLED or RETURNED"
	}
	row.status = rec[1]
	if row.amount, problem = moneyCells(rec[2], rec[4], ""); problem != "" {
		return row, problem
	}
	fee, err := postings.ParseSignedAmount(rec[3], row.amount.Currency)
	if err != nil || fee < 0 || fee > postings.AmountMinorMax {
		return row, fmt.Sprintf("fee %q: must be a decimal of at least 0 in the currency's decimals", truncateText(rec[3], 40))
	}
	row.fee = money(fee, row.amount.Currency)
	row.day, problem = dateCell("date", rec[5])
	row.date = rec[5]
	return row, problem
}
