package reconcile

import (
	"context"
	"encoding/hex"
	"io"
	"time"

	"github.com/paygate/gateway/postings"
)

// A bank statement reconciliation (docs/finance.md, "Bank statement
// reconciliation") matches the lines of the bank account a merchant's
// deposits arrive on against the merchant's DEPOSIT entries of a period,
// by the bank's reference, with the discipline of the settlement file: the
// period is stated (the file's first line or the caller's), the ledger's
// side is every deposit of it, each finding is its own category, the
// totals per currency come first and the verdict last, and a file that
// matched is recorded so that a second claim on a deposit is caught.

// KindBankDeposit is a bank statement against DEPOSIT entries.
const KindBankDeposit = "bank_deposit"

// CategoryCurrencyDiffers is a bank line whose reference is a deposit's
// in another currency only.
const CategoryCurrencyDiffers = "currency_differs"

// bankHeader is the bank statement's header, column by column.
var bankHeader = []string{"value_date", "amount", "currency", "reference"}

// BankInput is a bank statement to reconcile.
type BankInput struct {
	File     io.ReadSeeker // read twice: for its SHA-256, then to match
	Name     string
	Merchant int64  // whose deposits
	ShopNo   string // the merchant's, as reported
	Period   Period // the caller's; zero when the file states its own
	Actor    string
}

// BankReport is what a bank statement reconciliation found.
type BankReport struct {
	File   SettlementFile `json:"file"`
	ShopNo string         `json:"shopNo"`
	fileReport[BankItem, BankCounts]
}

// BankCounts counts the lines and deposits of each category,
// under its JSON name (categoriesOf: the text report and the counting
// read the fields by it; matched first).
type BankCounts struct {
	Matched           int64 `json:"matched"`
	AmountDiffers     int64 `json:"amount_differs"`
	CurrencyDiffers   int64 `json:"currency_differs"`
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
func (c BankCounts) ToAct() int64 { return toAct(categoriesOf(&c)) }

// BankItem is one bank line or deposit that did not match.
type BankItem struct {
	Category     string          `json:"category"`
	Line         int64           `json:"line,omitempty"` // 0 for missing_in_file and empty_file
	ValueDate    string          `json:"valueDate,omitempty"`
	Reference    string          `json:"reference,omitempty"`
	FileAmount   *postings.Money `json:"fileAmount,omitempty"`
	LedgerAmount *postings.Money `json:"ledgerAmount,omitempty"`
	// The DEPOSIT entry, when there is one.
	Seq      int64      `json:"seq,omitempty"`
	BookedAt *time.Time `json:"bookedAt,omitempty"`
	Detail   string     `json:"detail"`
}

// bankRow is one readable line of the statement.
type bankRow struct {
	line      int64
	valueDate string
	day       time.Time
	amount    postings.Money
	reference string
}

// Bank reconciles a bank statement against the merchant's deposits of the
// period. A report whose verdict is MATCHED is recorded in rec (kind
// bank_deposit) unless the same file was; rec nil records and reads
// nothing. A *FileError means the file as a whole cannot be read (exit 2).
func Bank(ctx context.Context, src BankSource, rec *Records, in BankInput) (*BankReport, error) {
	rep, err := bank(ctx, src, rec, in)
	return rep, nameFileError(err, "bank statement")
}

func bank(ctx context.Context, src BankSource, rec *Records, in BankInput) (*BankReport, error) {
	sum, p, period, err := openFile(in.File, bankHeader, in.Period)
	if err != nil {
		return nil, err
	}
	rep := &BankReport{File: SettlementFile{Name: in.Name, SHA256: hex.EncodeToString(sum)}, ShopNo: in.ShopNo,
		fileReport: newFileReport[BankItem, BankCounts](period, &bankSpec)}
	m := &bankMatcher{rep: rep, src: src, fileRun: fileRun{rec: rec}, period: period, merchant: in.Merchant,
		named: map[string]int64{}, namedEntries: map[int64]bool{}, invalidRefs: map[string]bool{}}
	if err := reconcileFile(ctx, &m.fileRun, p, sum, in.Name, in.Actor, parseBankRow, m, rep); err != nil {
		return nil, err
	}
	return rep, nil
}
