package reconcile

import (
	"context"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// BankSource is what a bank statement reconciliation needs: a merchant's
// deposits as the journal has them (internal/deposit books them; the bank's
// reference is the DEPOSIT entry's txId).
type BankSource interface {
	// DepositsByReference returns the merchant's deposits whose reference
	// is one of refs, in any currency and at any time.
	DepositsByReference(ctx context.Context, merchant int64, refs []string) ([]LedgerDeposit, error)
	// DepositsBetween pages through the merchant's deposits booked in
	// [from, to), in (CreatedAt, EntryID) order after the cursor, at most
	// limit; fewer than limit means the last page. Deposits without a
	// reference (from before references) are included.
	DepositsBetween(ctx context.Context, merchant int64, from, to time.Time, after SettlementCursor, limit int) ([]LedgerDeposit, error)
}

// LedgerDeposit is a DEPOSIT entry: what the bank line should match.
type LedgerDeposit struct {
	EntryID   int64     `bun:"entry_id"`
	Seq       int64     `bun:"merchant_seq"`
	Reference string    `bun:"reference"` // "" for a deposit from before references
	Amount    int64     `bun:"amount"`    // minor units of Currency, > 0
	Currency  string    `bun:"currency"`
	CreatedAt time.Time `bun:"created_at"`
}

// JournalDeposits reads deposits from the auditor's `bill` view (this
// package's, sql/0006): the funding account's DEPOSIT lines, whose txId is
// the bank reference. The entry's id, which a reconciliation records, is
// read with the line from the journal in the same statement.
type JournalDeposits struct{ DB bun.IDB }

// A deposit that an approved adjustment reversed (an ADJUSTMENT entry whose
// metadata names it, corrects_seq; internal/adjustment) is not expected on
// the bank statement: the books say the money never came.
const depositColumns = `select e.id as entry_id, b.merchant_seq, coalesce(b.tx_id, '') as reference, b.amount, b.currency, b.created_at
	from bill b join entries e on e.merchant_id = b.merchant_id and e.merchant_seq = b.merchant_seq
	where b.merchant_id = ? and b.kind = 'DEPOSIT' and b.account_type = 'funding' and b.amount > 0
	  and not exists (select 1 from entries r where r.merchant_id = b.merchant_id and r.kind = 'ADJUSTMENT'
	                  and r.metadata->>'corrects_seq' = b.merchant_seq::text)`

// DepositsByReference implements BankSource. The references are bound as
// one array literal: each is a reference's text ([A-Za-z0-9_.:-]), so no
// quoting is needed, and a caller passes only such text.
func (j JournalDeposits) DepositsByReference(ctx context.Context, merchant int64, refs []string) ([]LedgerDeposit, error) {
	out := []LedgerDeposit{}
	if len(refs) == 0 {
		return out, nil
	}
	err := j.DB.NewRaw(depositColumns+` and b.tx_id = any(?::text[]) order by b.merchant_seq`,
		merchant, "{"+strings.Join(refs, ",")+"}").Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// DepositsBetween implements BankSource.
func (j JournalDeposits) DepositsBetween(ctx context.Context, merchant int64, from, to time.Time, after SettlementCursor,
	limit int) ([]LedgerDeposit, error) {
	out := []LedgerDeposit{}
	err := j.DB.NewRaw(depositColumns+` and b.created_at >= ? and b.created_at < ?
		and (b.created_at, e.id) > (?, ?) order by b.created_at, e.id limit ?`,
		merchant, from.UTC(), to.UTC(), after.CreatedAt.UTC(), after.EntryID, limit).Scan(ctx, &out)
	for i := range out {
		out[i].CreatedAt = out[i].CreatedAt.UTC()
	}
	return out, ledger.MapError(err)
}
