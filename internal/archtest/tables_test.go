package archtest

import (
	"go/ast"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// One owner per table (issue 28 point 2): a table's SQL is written only in
// the package that owns it; every other package goes through the owner's
// Go API. The test reads the SQL the module writes — every string literal
// of a non-test Go file that reads as SQL, and the tables named by bun's
// TableExpr/ModelTableExpr and `bun:"table:…"` tags — takes the table
// names after from, join, into and update, and fails when a package names
// a table it does not own and the pair is not in tableAllowed with its
// reason. Which package owns a table is tableOwners (below); every table
// and view a migration of sql/ creates must be in it, so a new table is
// placed when it is made.

// tableOwners maps every table and view of sql/*.sql to the package whose
// SQL alone may name it. Mostly the migration that creates a table names
// its owner; where it does not, the comment says why.
var tableOwners = map[string]string{
	// 0001_ledger.sql: the journal.
	"ledger_heads": "ledger", "accounts": "ledger", "balances": "ledger", "entries": "ledger",
	"postings": "ledger", "idempotency_keys": "ledger",
	// The merchants, their credentials and key rolls are internal/merchant's;
	// the bill lines and blocks the core writes in the change's own
	// transaction, and internal/bill reads them.
	"merchants": "internal/merchant",
	// 0022: the data key's binding and versions (internal/merchant/keyring.go).
	"data_key_binding": "internal/merchant", "data_key_versions": "internal/merchant", "bill_lines": "ledger", "bill_blocks": "ledger",
	// 0002_cards.sql.
	"bins": "internal/cards", "merchant_bins": "internal/cards", "cards": "internal/cards",
	"merchant_limits": "internal/cards", "card_issue_daily": "internal/cards",
	"fx_rates": "internal/fx", // created with the cards; the rates are internal/fx's
	// The outbox: Tx.Emit writes an event in the change's own transaction,
	// which only the writer holds (created in 0002 with the cards).
	"events": "ledger",
	// 0003_network.sql.
	"authorizations": "internal/network", "auth_attempts": "internal/network",
	// A network refund's message id, with its CARD_REFUND entry.
	"network_refunds": "internal/network",
	// 0004_remittances.sql.
	"remittances": "internal/remittance", "remittance_history": "internal/remittance",
	"sanctions_entries": "internal/remittance",
	// 0005 and 0014: after the outbox's first row, a delivery is the
	// dispatcher's: claims, records, listing and replays.
	"deliveries": "internal/delivery", "delivery_attempts": "internal/delivery",
	// 0020: the Standard Webhooks secrets, sealed, which only the sender opens.
	"webhook_secrets": "internal/delivery",
	// Issue 32: the webhook endpoints, with their sealed secrets.
	"webhook_endpoints": "internal/delivery",
	// 0006_auditor.sql: the views the auditor role starts from. They are
	// for people in psql; the module's own reads of them are reconcile's
	// (the auditor's report).
	"bill": "reconcile", "trial_balance": "reconcile",
	// 0019_reconciliations.sql: the settlement runs a reconciliation
	// accepted and the clearings each claimed (reconcile/records.go).
	"reconciliation_runs": "reconcile", "reconciled_items": "reconcile",
	// The adjustments proposed, approved and rejected (internal/adjustment).
	"adjustments": "internal/adjustment",
	// The test merchants' clocks (internal/testclock).
	"test_clocks": "internal/testclock",
	// The bank references of deposits (internal/deposit).
	"deposit_references": "internal/deposit",
	// 0021_audit_anchor.sql: the signed checkpoints, append-only.
	"audit_checkpoints": "internal/audit",
	// 0026: the rates' versions (fx_rates is now the view of the latest),
	// and the auditor's read-only views of the facts behind the journal,
	// which Verify reads as an auditor does.
	"fx_rate_versions": "internal/fx", "audit_fx_rates": "internal/audit", "audit_authorizations": "internal/audit",
	"audit_holds": "internal/audit", "audit_remittances": "internal/audit", "audit_remittance_history": "internal/audit",
	// The cells (docs/scaling.md): each cell's identity, and the
	// directory's registry, placements and moves (internal/cells).
	"cell_identity": "internal/cells", "cell_registry": "internal/cells", "cell_directory": "internal/cells", "cell_moves": "internal/cells",
	// 0027: the signed period closes, append-only (internal/audit/close.go).
	"audit_period_closes": "internal/audit",
	// 0028 (the bill is the whole position): where each merchant's old bill
	// rules end and what its held and receivable accounts held then, read
	// by Verify and the statement (internal/audit/verify_position.go).
	"bill_rules_legacy": "internal/audit", "bill_openings": "internal/audit",
	// 0012_console.sql: the console's users, sessions and audit trail, in
	// the console's store (its pages go through it).
	"console_users": "internal/console/store", "console_sessions": "internal/console/store",
	"console_login_attempts": "internal/console/store", "console_audit": "internal/console/store",
	// sql/0032: a merchant's moves between cells, at the source and the
	// target, and the tombstones the source keeps (internal/cellmove).
	"cellmove_moves": "internal/cellmove", "cellmove_tombstones": "internal/cellmove", "cellmove_arrivals": "internal/cellmove",
	// sql/, "cellmove forwards": where a moved merchant's network ids went.
	"cellmove_forwards": "internal/cellmove",
	// sql/, "cellmove declines": the authorizations declined 91 in a
	// move's pause, the issuer's log of them.
	"cellmove_declines": "internal/cellmove",
}

// cellmoveReason is why the merchant mover names other packages' tables.
const cellmoveReason = "the merchant mover copies, verifies and removes one merchant's rows of every table (docs/scaling.md)"

// cellauditReason is why verify over cells reads other packages' tables.
const cellauditReason = "verify over cells compares each cell's rows with the other cells' and the directory, read only (docs/scaling.md, audit verify over all cells)"

// tableAllowed are the foreign reads and writes that stay, keyed by the
// package and the table, with the reason. Short on purpose: each is a
// package that checks another's rows against its own, or a move in
// progress. An entry that matches nothing fails the test.
var tableAllowed = map[string]string{
	// Moving a merchant between cells copies and removes every table of
	// its rows by name (internal/cellmove/tables.go); beyond that
	// generic copy it reads the head it verifies and fences, the merchant
	// it moves, the data key both cells must share, and the reconciled
	// entries it refuses to move. Its writes go through gateway_mover only.
	"internal/cellmove merchants":         cellmoveReason,
	"internal/cellmove ledger_heads":      cellmoveReason,
	"internal/cellmove entries":           cellmoveReason,
	"internal/cellmove remittances":       cellmoveReason,
	"internal/cellmove console_users":     cellmoveReason,
	"internal/cellmove data_key_binding":  cellmoveReason,
	"internal/cellmove data_key_versions": cellmoveReason,
	"internal/cellmove reconciled_items":  cellmoveReason,
	"internal/cellmove cards":             cellmoveReason,
	"internal/cellmove authorizations":    cellmoveReason,
	// Verify over cells (internal/cells/cellaudit) reads, in every cell,
	// the merchants, the moves' tombstones and arrivals, the cards' PAN
	// fingerprints, a tombstone's entry, and the operator's data it
	// compares across cells: no one owner's API spans cells.
	"internal/cells/cellaudit merchants":           cellauditReason,
	"internal/cells/cellaudit cellmove_tombstones": cellauditReason,
	"internal/cells/cellaudit cellmove_arrivals":   cellauditReason,
	"internal/cells/cellaudit cards":               cellauditReason,
	"internal/cells/cellaudit entries":             cellauditReason,
	"internal/cells/cellaudit bins":                cellauditReason,
	"internal/cells/cellaudit fx_rates":            cellauditReason,
	"internal/cells/cellaudit sanctions_entries":   cellauditReason,
	// The delivery claim reads the merchants' shop numbers and sealed
	// signing keys in its one statement per batch (the callback path's
	// latency, bench row 6a); the endpoints' reads join for the default
	// URL. To go through internal/merchant's batch reads as the events list
	// does, once a bench run shows the claim keeps its one round trip.
	"internal/delivery merchants": "the claim's one statement per batch (bench row 6a); the endpoints' default URL — open work of issue 28 point 2",

	// The data key's re-seal after a rotation (internal/merchant/reseal.go)
	// rewrites every sealed column in place, opened and sealed again with
	// the same additional data: one list of the columns beside the key
	// versions, rather than a re-seal hook in each owner.
	"internal/merchant cards":           "the re-seal moves pan_sealed to the current data key version",
	"internal/merchant console_users":   "the re-seal moves totp_sealed to the current data key version",
	"internal/merchant webhook_secrets": "the re-seal moves the sealed webhook secrets to the current data key version",

	// The outbox and its dispatcher share two tables by design
	// (docs/architecture.md, "The outbox is the core's").
	"ledger deliveries": "the outbox writes each event's first delivery row (PENDING) in the change's own " +
		"transaction, which only the writer holds; from then on the row is internal/delivery's",
	"internal/delivery events": "the dispatcher, the event list and the replays read the outbox's events joined " +
		"row by row to their deliveries, in one statement; through a core API it would be two reads per page",
	"internal/delivery cellmove_arrivals":   "the claim skips a merchant still arriving in this cell by a move (its source sends its callbacks until the switch)",
	"internal/network cellmove_arrivals":    "hold expiry skips a merchant still arriving in this cell by a move (its source expires its holds until the switch)",
	"internal/remittance cellmove_arrivals": "the lifecycle's claim skips a merchant still arriving in this cell by a move (its source steps its remittances until the switch)",
	"internal/delivery ledger_heads": "the event list's total is the head's last_event_seq, the outbox's gapless " +
		"count: one probe instead of counting the merchant's events; the claim skips a head a move has fenced",

	// Readers of the journal, as an auditor reads it: they check their own
	// rows against the entries, the truth of money.
	"internal/audit cards":          "Verify checks every card's balance against the journal",
	"internal/audit authorizations": "Verify checks every open hold against the journal",
	"internal/audit entries":        "Verify and the statement read the journal itself, as an auditor does",
	"internal/audit postings":       "Verify and the statement read the journal itself, as an auditor does",
	"internal/audit accounts":       "Verify recomputes every account and balance from the journal",
	"internal/audit balances":       "Verify recomputes every account and balance from the journal",
	"internal/audit ledger_heads":   "Verify checks every head against the last entry of its chain",
	"internal/audit bill_lines":     "Verify checks every bill line against its entry",
	"internal/audit bill_blocks":    "Verify checks the bill's running totals against its lines",
	"internal/bill accounts":        "a bill line's account address is shown with the line, read in the same statement",
	"ledger merchants": "the writer reads what a batch needs of each merchant (shop number, currencies, callback URL) " +
		"with its head lock, in the same statement: no round trip of its own on the hot path",
	"internal/bill bill_lines":  "the bill is the reader of the lines the core writes in the change's transaction",
	"internal/bill bill_blocks": "the bill's blocks are the core's running totals of those lines",
	"internal/bill postings": "the balance report sums the postings of held and receivable accounts, which " +
		"have no bill lines, in the same statement (one snapshot) as the bill's lines",
	"internal/bill entries": "the time and kind of those postings (with internal/bill postings); and a FEE line's relatedTo is its entry's (or the entry its metadata names), " +
		"probed with the page's lines in one statement (internal/bill/position.go)",
	"internal/network entries": "settlement reconciliation reads the clearing entries by auth_id, refund " +
		"reconciliation the CARD_REFUND entries by message id and period, and the refund limit sums the card's " +
		"CARD_REFUND entries: the journal is the truth of all three",
	"internal/network postings": "the amounts of the same entries (with internal/network entries)",
	"internal/remittance entries": "rail report reconciliation reads each remittance's REMIT_SETTLE or REMIT_RETURN " +
		"entry with the remittance's status and fee, in one statement",
	"internal/remittance postings": "the amounts of the same entries (with internal/remittance entries)",
	"reconcile entries": "bank statement reconciliation reads a deposit's entry id (what reconciled_items records) " +
		"with its line of the bill view, in one statement",
	"internal/cards accounts": "a card's balance is its account's, read with the card (and the profile's " +
		"balances with the merchant's accounts) in one statement; the core has no read of many balances",
	"internal/cards balances": "the same reads (with internal/cards accounts)",
}

// tableFree are the folders whose SQL is not held to the owners: the load
// and fault tools check the database from outside, as an auditor in psql
// would (chaos's invariants are the tables' rows; bench seeds and counts
// them), and they are not the product (TestProductImportsNoTool).
var tableFree = map[string]string{
	"tools/": "the load and fault tools read and seed the tables from outside, as an operator in psql would",
}

func TestEveryTableHasAnOwner(t *testing.T) {
	for _, name := range migrationTables(t, "../../sql") {
		if _, ok := tableOwners[name]; !ok {
			t.Errorf("sql/ creates %q, which tableOwners does not place: add it with its owning package", name)
		}
	}
}

func TestTablesAreWrittenOnlyByTheirOwner(t *testing.T) {
	used := map[string]bool{}
	for _, u := range foreignTableUses(t, "../..") {
		key := u.pkg + " " + u.table
		if _, ok := tableAllowed[key]; ok {
			used[key] = true
			continue
		}
		t.Errorf("%s: package %s names table %s, which is %s's: call %s's Go API (or, if it must stay, add %q to "+
			"tableAllowed with the reason)", u.pos, u.pkg, u.table, tableOwners[u.table], tableOwners[u.table], key)
	}
	for key, why := range tableAllowed {
		if !used[key] {
			t.Errorf("tableAllowed: %q matches no SQL any more; remove it", key)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("tableAllowed: %q has no reason", key)
		}
	}
}

// The scanner must see what it is meant to see: a table after each
// keyword, a qualified name, bun's table expressions and tags, SQL split
// over a concatenation, and no table in English prose.
func TestSQLTablesFindsTheTables(t *testing.T) {
	cases := []struct {
		sql  string
		want string
	}{
		{"select card_no from cards where merchant_id = $1", "cards"},
		{"select 1 from deliveries d join events e on e.event_seq = d.event_seq", "deliveries events"},
		{"insert into console_audit (at) values ($1)", "console_audit"},
		{"update public.remittances set status = $1", "remittances"},
		{"delete from console_sessions where token_sha256 = $1", "console_sessions"},
		{"SELECT x FROM Authorizations a LEFT JOIN cards c ON true", "authorizations cards"},
		{"with s as (update console_sessions set x = 1 returning id) select 1 from s", "console_sessions"},
		{"select extract(epoch from created_at) from entries", "entries"},
		{"the card could not be read from cards", ""}, // no SQL verb: prose
		{"failed to update remittances", ""},          // update without set: prose
	}
	for _, c := range cases {
		if got := strings.Join(sqlTables(c.sql), " "); got != c.want {
			t.Errorf("sqlTables(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
	src := `package p
var a = "select id " + "from cards where x = 1"
type row struct { _ struct{} ` + "`bun:\"table:remittances\"`" + ` }
func f(db any) { db.NewSelect().TableExpr("authorizations AS a") }`
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "internal", "console"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "internal", "console", "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range foreignTableUses(t, dir) {
		got = append(got, u.pkg+" "+u.table)
	}
	sort.Strings(got)
	want := "internal/console authorizations,internal/console cards,internal/console remittances"
	if strings.Join(got, ",") != want {
		t.Errorf("foreignTableUses on a made-up package = %q, want %q", strings.Join(got, ","), want)
	}
}

// migrationTables returns the tables and views the migrations in dir create.
func migrationTables(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations in %s: %v", dir, err)
	}
	create := regexp.MustCompile(`(?im)^\s*create\s+(?:or\s+replace\s+)?(?:materialized\s+)?(?:table|view)\s+(?:if\s+not\s+exists\s+)?(?:public\.)?([a-z_][a-z0-9_]*)`)
	var out []string
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(body), -1) {
			out = append(out, strings.ToLower(m[1]))
		}
	}
	return out
}

type tableUse struct {
	pos   string
	pkg   string
	table string
}

// foreignTableUses returns every place under root where a package's SQL
// names a table of tableOwners that another package owns.
func foreignTableUses(t *testing.T, root string) []tableUse {
	var out []tableUse
	eachGoFile(t, root, func(fset *token.FileSet, rel string, f *ast.File) {
		pkg := path.Dir(rel)
		for prefix := range tableFree {
			if strings.HasPrefix(pkg+"/", prefix) {
				return
			}
		}
		add := func(at token.Pos, tables []string) {
			for _, tb := range tables {
				if owner, ok := tableOwners[tb]; ok && owner != pkg {
					out = append(out, tableUse{pos: fset.Position(at).String(), pkg: pkg, table: tb})
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				// SQL built by concatenation: read the literals joined, so
				// that "select … " + "from cards" is seen whole. The parts
				// are not visited again (a part alone may read as SQL too).
				if s, ok := literalConcat(n); ok {
					add(n.Pos(), sqlTables(s))
					return false
				}
			case *ast.BasicLit:
				if s, ok := stringLit(n); ok {
					add(n.Pos(), sqlTables(s))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && len(n.Args) > 0 &&
					(sel.Sel.Name == "TableExpr" || sel.Sel.Name == "ModelTableExpr") {
					if s, ok := stringLit(n.Args[0]); ok {
						add(n.Pos(), firstWord(s))
					}
				}
			case *ast.Field:
				if n.Tag != nil {
					if s, ok := stringLit(n.Tag); ok {
						if m := bunTable.FindStringSubmatch(s); m != nil {
							add(n.Pos(), []string{strings.ToLower(m[1])})
						}
					}
				}
			}
			return true
		})
	})
	return out
}

var bunTable = regexp.MustCompile(`bun:"table:([A-Za-z_][A-Za-z0-9_]*)`)

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// literalConcat joins a + chain whose leaves are all string literals, or
// some literals and identifiers (constants such as a column list): the
// identifiers read as a space, which keeps the keywords apart.
func literalConcat(b *ast.BinaryExpr) (string, bool) {
	if b.Op != token.ADD {
		return "", false
	}
	var sb strings.Builder
	lits := 0
	var walk func(e ast.Expr) bool
	walk = func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.BinaryExpr:
			return e.Op == token.ADD && walk(e.X) && walk(e.Y)
		case *ast.ParenExpr:
			return walk(e.X)
		case *ast.BasicLit:
			s, ok := stringLit(e)
			sb.WriteString(s)
			lits++
			return ok
		default:
			sb.WriteString(" ")
			return true
		}
	}
	ok := walk(b) && lits > 0
	return sb.String(), ok
}

func firstWord(s string) []string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil
	}
	return []string{strings.ToLower(strings.TrimPrefix(f[0], "public."))}
}

var (
	// A literal is SQL when it has a statement's shape: select … from,
	// insert into, update … set, delete from.
	sqlShape = regexp.MustCompile(`(?is)\bselect\b.*\bfrom\b|\binsert\s+into\b|\bupdate\s+\S+\s+set\b|\bdelete\s+from\b|\bjoin\s+\S+.*\bon\b`)
	// The tables follow from, join, into and update, possibly qualified.
	sqlTable = regexp.MustCompile(`(?i)\b(?:from|join|into|update)\s+(?:only\s+)?(?:public\.)?([a-z_][a-z0-9_]*)`)
)

// sqlTables returns the tables s names, in order, when s reads as SQL.
func sqlTables(s string) []string {
	if !mayBeSQL(s) || !sqlShape.MatchString(s) {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range sqlTable.FindAllStringSubmatch(s, -1) {
		name := strings.ToLower(m[1])
		if _, known := tableOwners[name]; known && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// sqlVerbs are the words one of which sqlShape needs.
var sqlVerbs = []string{"select", "insert", "update", "delete", "join"}

// mayBeSQL is false when s has none of sqlVerbs, in any case: then sqlShape
// cannot match, and the module's many literals that are not SQL skip the
// regexp, which under -race made this test one of the tier's slowest.
func mayBeSQL(s string) bool {
	lower := strings.ToLower(s)
	for _, v := range sqlVerbs {
		if strings.Contains(lower, v) {
			return true
		}
	}
	return false
}
