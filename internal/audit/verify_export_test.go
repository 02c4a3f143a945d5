package audit

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// VerifyHooks are the test hooks of Verify (verify.go's verifyHooks).
type VerifyHooks struct {
	// AfterSnapshot runs once the snapshot is taken (and exported), before
	// anything is read and before any helper connection imports it.
	AfterSnapshot func()
	// BeforeCheck runs before each aggregate check, with the connection it
	// runs on: 0 is the stream's, 1… the helpers'. It is called from
	// several goroutines.
	BeforeCheck func(conn int, name string)
	// Helpers overrides how many helper connections Verify uses, when set.
	Helpers *int
	// HelpersOnly keeps the stream's connection from taking checks while a
	// helper can.
	HelpersOnly bool
	// ExportFails makes pg_export_snapshot fail.
	ExportFails bool
	// FetchRows overrides the rows per fetch of the stream's cursors, and
	// AccountsCachedMax the accounts its cache keeps, when not 0: small
	// values make every batch and cache boundary fall inside a test's
	// journal.
	FetchRows, AccountsCachedMax int
	// ChainAccountsMax overrides how many accounts' balance_after chains
	// the stream follows before it leaves the chain to the query.
	ChainAccountsMax int
	// ChainQueried is called when the chain is left to the query.
	ChainQueried func()
	// BalanceAccountsMax overrides how many accounts the stream folds the
	// postings of before it leaves the balance comparison to the query;
	// BalanceQueried is called when it does.
	BalanceAccountsMax int
	BalanceQueried     func()
}

// WithVerifyHooks returns opts with the hooks set.
func WithVerifyHooks(opts VerifyOptions, h VerifyHooks) VerifyOptions {
	opts.hooks = &verifyHooks{afterSnapshot: h.AfterSnapshot, beforeCheck: h.BeforeCheck,
		helpers: h.Helpers, helpersOnly: h.HelpersOnly, exportFails: h.ExportFails,
		fetchRows: h.FetchRows, accountsMax: h.AccountsCachedMax, chainMax: h.ChainAccountsMax,
		chainQueried: h.ChainQueried, balanceMax: h.BalanceAccountsMax, balanceQuery: h.BalanceQueried}
	return opts
}

// VerifyCheckNames lists the aggregate checks by name.
func VerifyCheckNames() []string {
	names := make([]string, len(verifyChecks))
	for i, c := range verifyChecks {
		names[i] = c.name
	}
	return names
}

// VerifyCursorSettings are in force while the stream's cursors are planned.
const VerifyCursorSettings = verifyCursorSettings

// VerifyCursor is one of the stream's cursors: its query for a merchant
// (0: all) and the index whose order it must be read in.
type VerifyCursor struct {
	Name, SQL, Index string
}

// VerifyCursors returns the stream's cursors for merchant m.
func VerifyCursors(m int64) []VerifyCursor {
	return []VerifyCursor{
		{"entries", fmt.Sprintf(verifyEntriesSQL, m), "entries_pkey"},
		{"postings", fmt.Sprintf(verifyPostingsSQL, m), "postings_pkey"},
		{"bill lines", fmt.Sprintf(verifyLinesSQL, m), "bill_lines_posting_key"},
	}
}

// CursorRow is a row read by ReadCursor.
type CursorRow struct {
	Merchant, Seq int64
	Text          *string // nil: NULL
}

// ReadCursor reads query, whose columns are (int8, int8, text), through the
// stream's cursor reader in batches of batch rows, on a connection of db
// in a transaction of its own.
func ReadCursor(ctx context.Context, db *bun.DB, query string, batch int) ([]CursorRow, error) {
	c, err := db.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	conn, err := ledger.PgxConn(c)
	if err != nil {
		return nil, err
	}
	pc := conn.PgConn()
	if _, err := pc.Exec(ctx, "begin").ReadAll(); err != nil {
		return nil, err
	}
	defer func() { _, _ = pc.Exec(ctx, "rollback").ReadAll() }()
	cur := journalCursor{name: "test_cursor", types: []uint32{oidInt8, oidInt8, oidText}, rows: batch}
	if err := declareCursor(ctx, pc, cur.name, query); err != nil {
		return nil, err
	}
	f := startFetcher(ctx, pc, &cur)
	defer f.stop()
	var out []CursorRow
	for {
		v, err := cur.peek()
		if err != nil || v == nil {
			return out, err
		}
		k := cur.key()
		r := CursorRow{Merchant: k.merchant, Seq: k.seq}
		if v[2] != nil {
			s := string(v[2])
			r.Text = &s
		}
		out = append(out, r)
		cur.advance()
	}
}
