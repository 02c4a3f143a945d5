package reconcile

import (
	"context"
	"encoding/hex"
	"io"
	"time"

	"github.com/paygate/gateway/postings"
)

// The card network's refund file (docs/finance.md, "Refund
// reconciliation") against the journal's CARD_REFUND entries, with the
// settlement file's discipline: a stated period, every refund of it on the
// ledger's side, one category per finding, totals first, verdict last, a
// matched file recorded (kind network_refund) so that a second claim on a
// refund is caught. A refund is matched by the network's message id,
// which internal/network keeps on the entry (its txId): two equal refunds
// on one card and day are two rows.

// KindNetworkRefund is the network's refund file against CARD_REFUND
// entries.
const KindNetworkRefund = "network_refund"

// CategoryCardDiffers: the refund of this message id credited another
// card than the row names.
const CategoryCardDiffers = "card_differs"

var refundHeader = []string{"message_id", "card_no", "amount", "currency", "date"}

// RefundSource is the network's refunds as the journal has them
// (internal/app/services adapts internal/network).
type RefundSource interface {
	// RefundsByMessage returns, for each message id in order, the refund
	// that carries it (Found), a test merchant's flagged.
	RefundsByMessage(ctx context.Context, messageIDs []string) ([]RefundEntry, error)
	// RefundsBetween pages through the CARD_REFUND entries of every
	// merchant but the test ones created in [from, to), in (CreatedAt,
	// EntryID) order after the cursor, at most limit.
	RefundsBetween(ctx context.Context, from, to time.Time, after SettlementCursor, limit int) ([]RefundEntry, error)
}

// RefundEntry is a refund from the network as the journal has it.
type RefundEntry struct {
	MessageID string // "" for a refund booked before refunds kept their message id
	Found     bool   // a CARD_REFUND entry carries the message id; the fields below are set only then
	Test      bool   // a test merchant's: its sandbox's, never the network's
	EntryID   int64
	Merchant  int64
	ShopNo    string
	Seq       int64
	CardNo    string
	Amount    int64 // minor units of Currency, the card's
	Currency  string
	CreatedAt time.Time
}

// RefundInput is a refund file to reconcile.
type RefundInput struct {
	File   io.ReadSeeker
	Name   string
	Period Period // zero: the file's "# period:" line states it
	Actor  string
}

// RefundReport is what a refund file reconciliation found.
type RefundReport struct {
	File SettlementFile `json:"file"`
	fileReport[RefundItem, RefundCounts]
}

// RefundCounts counts the rows and entries of each category,
// under its JSON name (categoriesOf: the text report and the counting
// read the fields by it; matched first).
type RefundCounts struct {
	Matched           int64 `json:"matched"`
	AmountDiffers     int64 `json:"amount_differs"`
	CardDiffers       int64 `json:"card_differs"`
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
func (c RefundCounts) ToAct() int64 { return toAct(categoriesOf(&c)) }

// RefundItem is one row or refund that did not match.
type RefundItem struct {
	Category     string          `json:"category"`
	Line         int64           `json:"line,omitempty"`
	MessageID    string          `json:"messageId,omitempty"`
	CardNo       string          `json:"cardNo,omitempty"` // the file's
	Date         string          `json:"date,omitempty"`
	FileAmount   *postings.Money `json:"fileAmount,omitempty"`
	ShopNo       string          `json:"shopNo,omitempty"`
	LedgerCardNo string          `json:"ledgerCardNo,omitempty"`
	LedgerAmount *postings.Money `json:"ledgerAmount,omitempty"`
	Seq          int64           `json:"seq,omitempty"`
	LedgerTime   *time.Time      `json:"ledgerTs,omitempty"`
	Detail       string          `json:"detail"`
}

type refundRow struct {
	line              int64
	messageID, cardNo string
	amount            postings.Money
	date              string
	day               time.Time
}

// Refunds reconciles the network's refund file against the journal. A file
// whose verdict is MATCHED is recorded in rec unless the same file was;
// rec nil records and reads nothing. A *FileError is exit status 2.
func Refunds(ctx context.Context, src RefundSource, rec *Records, in RefundInput) (*RefundReport, error) {
	rep, err := refunds(ctx, src, rec, in)
	return rep, nameFileError(err, "refund file")
}

func refunds(ctx context.Context, src RefundSource, rec *Records, in RefundInput) (*RefundReport, error) {
	sum, p, period, err := openFile(in.File, refundHeader, in.Period)
	if err != nil {
		return nil, err
	}
	rep := &RefundReport{File: SettlementFile{Name: in.Name, SHA256: hex.EncodeToString(sum)},
		fileReport: newFileReport[RefundItem, RefundCounts](period, &refundSpec)}
	m := &refundMatcher{rep: rep, src: src, fileRun: fileRun{rec: rec},
		keyedScreen: newKeyedScreen(period, &rep.currencyTotals, "file", "refund message")}
	return rep, reconcileFile(ctx, &m.fileRun, p, sum, in.Name, in.Actor, parseRefundRow, m, rep)
}

// parseRefundRow reads one row; problem is empty when it is valid. A
// field that is not what it should be is never echoed raw.
func parseRefundRow(line int64, rec []string, readErr error) (row refundRow, problem string) {
	row.line = line
	if problem = trimCells(rec, readErr, refundHeader); problem != "" {
		return row, problem
	}
	if !postings.IsRefText(rec[0]) {
		return row, "message_id: must be 1 to 64 characters of [A-Za-z0-9_.:-] (the network's refund message id)"
	}
	row.messageID = rec[0]
	if !postings.IsRefText(rec[1]) {
		return row, "card_no: must be 1 to 64 characters of [A-Za-z0-9_.:-] (the card's cardNo)"
	}
	row.cardNo = rec[1]
	if row.amount, problem = moneyCells(rec[2], rec[3], ""); problem != "" {
		return row, problem
	}
	row.day, problem = dateCell("date", rec[4])
	row.date = rec[4]
	return row, problem
}
