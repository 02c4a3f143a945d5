// Package cellmove moves one merchant from one cell's database to another's
// while it is live (issue 33 point 3; docs/scaling.md, "Moving a merchant
// between cells"): a background copy, a short pause of that merchant only
// in which the tail is copied and the target's chain verified against the
// source's head, the directory switched, and the source's rows removed by
// the dedicated role gateway_mover, a tombstone kept. Each step is recorded
// (cellmove_moves at the source, cellmove_arrivals at the target), so that a
// mover killed anywhere resumes or rolls back, never leaving a merchant
// half in two cells.
package cellmove

// mode is how a table's rows reach the target in a copy round.
type mode int

const (
	// appendOnly tables grow by a per-merchant sequence that the ledger
	// hands out under the merchant's head lock, so their rows commit in
	// that order: a round copies the rows past the target's highest.
	appendOnly mode = iota
	// insertNew tables never change a row once written (or may not be
	// changed on the target, as accounts' guarded columns): a round
	// stages the source's rows and inserts those the target lacks.
	insertNew
	// replace tables change their rows in place (balances, a card's
	// status, a delivery's attempts, the head): a round stages the
	// source's rows, removes the target's rows the source no longer has,
	// and upserts the rest.
	replace
)

// table is one table of a merchant's rows.
type table struct {
	name string
	mode mode
	// where selects the merchant's rows; current_setting('cellmove.m')
	// is the merchant's id, set with a bound parameter (COPY itself
	// takes none).
	where string
	// seq is an appendOnly table's sequence column.
	seq string
	// local are columns of the source cell's own state, not the
	// merchant's, each with the value the copy reads instead, so that
	// the target's row starts from it: the head's fence (sql/0035's
	// trigger) holds the merchant at the source only. Read where a
	// table is staged: not for appendOnly tables.
	local map[string]string
}

const (
	byMerchant    = "merchant_id = current_setting('cellmove.m')::bigint"
	byMerchantID  = "id = current_setting('cellmove.m')::bigint"
	byRemittance  = "tx_id in (select tx_id from remittances where " + byMerchant + ")"
	byConsoleUser = "user_id in (select id from console_users where " + byMerchant + ")"
)

// tables are the tables of a merchant's rows in dependency order: every
// table after each table its foreign keys name (TestTablesFollowTheForeignKeys),
// and every table with a merchant_id column, or whose rows belong to one
// through a foreign key, is here or in notPerMerchant
// (TestEveryMerchantTableIsCovered). The events come before the webhook
// endpoints and the deliveries last but the attempts: the target's fan-out
// trigger writes deliveries for the events it receives, which the
// deliveries' own round then makes exactly the source's.
var tables = []table{
	{name: "merchants", mode: replace, where: byMerchantID},
	{name: "ledger_heads", mode: replace, where: byMerchant, local: map[string]string{"cellmove_fenced": "false"}},
	{name: "accounts", mode: insertNew, where: byMerchant},
	{name: "entries", mode: appendOnly, where: byMerchant, seq: "merchant_seq"},
	{name: "postings", mode: appendOnly, where: byMerchant, seq: "merchant_seq"},
	{name: "bill_lines", mode: appendOnly, where: byMerchant, seq: "bill_seq"},
	{name: "balances", mode: replace, where: byMerchant},
	{name: "idempotency_keys", mode: replace, where: byMerchant},
	{name: "bill_rules_legacy", mode: insertNew, where: byMerchant},
	{name: "bill_openings", mode: insertNew, where: byMerchant},
	{name: "deposit_references", mode: appendOnly, where: byMerchant, seq: "merchant_seq"},
	{name: "merchant_bins", mode: replace, where: byMerchant},
	{name: "merchant_limits", mode: replace, where: byMerchant},
	{name: "card_issue_daily", mode: replace, where: byMerchant},
	{name: "cards", mode: replace, where: byMerchant},
	{name: "authorizations", mode: replace, where: byMerchant},
	{name: "auth_attempts", mode: insertNew, where: byMerchant},
	{name: "network_refunds", mode: insertNew, where: byMerchant},
	{name: "remittances", mode: replace, where: byMerchant},
	{name: "remittance_history", mode: insertNew, where: byRemittance},
	{name: "console_users", mode: replace, where: byMerchant},
	{name: "console_sessions", mode: replace, where: byConsoleUser},
	{name: "console_audit", mode: insertNew, where: byConsoleUser},
	{name: "adjustments", mode: replace, where: byMerchant},
	{name: "audit_period_closes", mode: insertNew, where: byMerchant},
	{name: "webhook_secrets", mode: replace, where: byMerchant},
	{name: "test_clocks", mode: replace, where: byMerchant},
	{name: "events", mode: appendOnly, where: byMerchant, seq: "event_seq"},
	{name: "webhook_endpoints", mode: replace, where: byMerchant},
	{name: "deliveries", mode: replace, where: byMerchant},
	{name: "delivery_attempts", mode: insertNew, where: byMerchant},
}

// notPerMerchant are the tables a move leaves where they are, each with
// its reason. A table with a merchant_id column listed here is removed at
// the source nonetheless when removeAtSource says so.
var notPerMerchant = map[string]string{
	"bill_blocks": "derived: the target's insert trigger on bill_lines counts the copied lines (sql/0010); " +
		"removed at the source with the merchant",
	"bins":                   "operator data, loaded into every cell",
	"fx_rate_versions":       "operator data, loaded into every cell",
	"sanctions_entries":      "operator data, loaded into every cell",
	"data_key_binding":       "the cell's data key; a move requires the same key in both cells (checkDataKeys)",
	"data_key_versions":      "the cell's data key versions; a move requires the same ones in both cells (checkDataKeys)",
	"audit_checkpoints":      "the cell's signed checkpoints over all its merchants; the tombstone records where the moved chain left",
	"reconciliation_runs":    "the operator's reconciliation of the cell's files; a merchant with reconciled entries is refused (checkReconciled)",
	"reconciled_items":       "the operator's reconciliation of the cell's files; a merchant with reconciled entries is refused (checkReconciled)",
	"console_login_attempts": "the cell's login throttling, by login name, not by merchant",
	"schema_migrations":      "the cell's schema",
	"cell_directory":         "the directory (internal/cells), in the home cell only: the move switches its row, it does not copy it",
	"cell_moves":             "the directory's record of moves (internal/cells), in the home cell only",
	"cellmove_moves":         "the move's own record at the source",
	"cellmove_tombstones":    "the move's own record at the source",
	"cellmove_arrivals":      "the move's own record at the target",
}

// removeAlso are tables the source removal clears of the merchant's rows
// beyond those copied: derived from them, and keyed by merchant.
var removeAlso = []table{{name: "bill_blocks", where: byMerchant}}
