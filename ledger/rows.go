package ledger

import (
	"database/sql"
	"time"

	"github.com/uptrace/bun"
)

// Row types: how tables look to bun. They stay unexported; the rest of the
// program sees postings types and the ledger's own result types.

type accountBalanceRow struct {
	ID         int64  `bun:"id"`
	MerchantID int64  `bun:"merchant_id"`
	Type       string `bun:"type"`
	Currency   string `bun:"currency"`
	CardNo     string `bun:"card_no"`
	Balance    int64  `bun:"balance"`
	LastSeq    int64  `bun:"last_seq"`
}

type billLineRow struct {
	bun.BaseModel `bun:"table:bill_lines"`
	MerchantID    int64          `bun:"merchant_id,pk"`
	BillSeq       int64          `bun:"bill_seq,pk"`
	MerchantSeq   int64          `bun:"merchant_seq"`
	PostingIdx    int16          `bun:"posting_idx"`
	AccountID     int64          `bun:"account_id"`
	Kind          string         `bun:"kind"`
	Amount        int64          `bun:"amount"`
	Currency      string         `bun:"currency"`
	BalanceAfter  int64          `bun:"balance_after"`
	CreatedAt     time.Time      `bun:"created_at"`
	CardNo        sql.NullString `bun:"card_no"`
	TxID          sql.NullString `bun:"tx_id"`
	AuthID        sql.NullString `bun:"auth_id"`
}
