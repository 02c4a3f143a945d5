package ledger

import (
	"database/sql"
	"time"

	"github.com/uptrace/bun"
)

// Row types: how tables look to bun. They stay unexported; the rest of the
// program sees postings types and the ledger's own result types.

type accountRow struct {
	bun.BaseModel `bun:"table:accounts"`
	ID            int64          `bun:"id,pk"`
	MerchantID    int64          `bun:"merchant_id"`
	Type          string         `bun:"type"`
	Currency      string         `bun:"currency"`
	CardNo        sql.NullString `bun:"card_no"`
	Address       string         `bun:"address"`
}

type balanceRow struct {
	bun.BaseModel `bun:"table:balances"`
	AccountID     int64  `bun:"account_id,pk"`
	MerchantID    int64  `bun:"merchant_id"`
	Currency      string `bun:"currency"`
	Constrained   bool   `bun:"constrained"`
	Balance       int64  `bun:"balance"`
	LastSeq       int64  `bun:"last_seq"`
}

type accountBalanceRow struct {
	ID         int64  `bun:"id"`
	MerchantID int64  `bun:"merchant_id"`
	Type       string `bun:"type"`
	Currency   string `bun:"currency"`
	CardNo     string `bun:"card_no"`
	Balance    int64  `bun:"balance"`
	LastSeq    int64  `bun:"last_seq"`
}

type entryRow struct {
	bun.BaseModel `bun:"table:entries"`
	MerchantID    int64             `bun:"merchant_id,pk"`
	MerchantSeq   int64             `bun:"merchant_seq,pk"`
	Kind          string            `bun:"kind"`
	CreatedAt     time.Time         `bun:"created_at"`
	CardNo        sql.NullString    `bun:"card_no"`
	TxID          sql.NullString    `bun:"tx_id"`
	AuthID        sql.NullString    `bun:"auth_id"`
	Metadata      map[string]string `bun:"metadata,type:jsonb"`
	PrevHash      []byte            `bun:"prev_hash"`
	Hash          []byte            `bun:"hash"`
}

type postingRow struct {
	bun.BaseModel `bun:"table:postings"`
	MerchantID    int64  `bun:"merchant_id,pk"`
	MerchantSeq   int64  `bun:"merchant_seq,pk"`
	Idx           int16  `bun:"idx,pk"`
	SourceID      int64  `bun:"source_id"`
	DestinationID int64  `bun:"destination_id"`
	Amount        int64  `bun:"amount"`
	Currency      string `bun:"currency"`
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
