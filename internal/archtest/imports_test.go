package archtest

import (
	"slices"
	"strings"
	"testing"
)

const module = "github.com/paygate/gateway/"

// allowed is, for each package of the module, the packages of the module it
// may import (docs/architecture.md, "What may import what"). The graph
// only goes down: from the commands to the HTTP surface and the workers, to
// the domains, to the journal core, to the pure rules. A package missing
// here fails the test until it is placed.
var allowed = map[string][]string{
	// Pure rules: no I/O.
	"postings":                      {},
	"internal/remittance/rules":     {"postings"},
	"internal/callbackurl":          {},
	"api/client/receiver":           {"api/client/receiver/signature"}, // merchants import it: nothing else of ours
	"api/client/receiver/signature": {},                                // the callbacks' signature: the sender's and the receiver's
	// The typed client merchants import: the receiver's verification only.
	"api/client":             {"api/client/receiver"},
	"docs/examples/goclient": {"api/client"},
	"sql":                    {},
	// The HTTP surface's bounds as values: config reads them, api enforces them.
	"internal/httplimits": {"postings"},
	// The HTTP plumbing under the listeners that is not the /shop contract
	// (the server, listeners, TLS, request ids, body deadlines, rate
	// buckets, health, the metrics registry with the writer's and the read
	// route's counters): api builds on it, the app and the console's
	// listener use it.
	"internal/httpserve": {"internal/httplimits", "internal/database", "ledger", "postings"},

	// The journal core and its PostgreSQL tooling.
	"ledger": {"postings", "sql", "internal/database"},
	// Below the journal: the pools, the migrations and the routing of
	// standby-tolerant reads.
	"internal/database": {"sql"},
	"ledger/pgcluster":  {},
	"ledger/pgtest":     {"ledger", "internal/database", "ledger/pgcluster", "sql"},
	// High availability: a synchronous pair, the formation, backups.
	"internal/pgha":          {"ledger/pgcluster"},
	"internal/pgha/pghatest": {"internal/pgha"},

	// The merchants: their configuration, credentials, authentication, key
	// rolls, and the sealing of secrets at rest; on the core, which opens
	// a new merchant's journal in the same transaction.
	"internal/merchant": {"ledger", "postings"},

	// The domains, each above the core and the domains it builds on.
	"internal/fx":         {"ledger", "postings"},
	"internal/cards":      {"ledger", "internal/database", "postings", "internal/fx", "internal/merchant", "internal/audit"},
	"internal/network":    {"ledger", "internal/database", "postings", "internal/fx", "internal/cards", "internal/merchant"},
	"internal/remittance": {"ledger", "internal/database", "postings", "internal/cards", "internal/merchant", "internal/remittance/rules"},
	"internal/delivery":   {"ledger", "postings", "internal/merchant", "internal/callbackurl", "api/client/receiver/signature"},
	"internal/railsim":    {"internal/remittance"},
	"internal/testclock":  {"ledger", "postings", "internal/network", "internal/remittance", "internal/delivery"},
	// Corrections: ADJUSTMENT entries proposed and approved by house users.
	"internal/adjustment": {"ledger", "postings"},
	// Deposits with the bank's reference.
	"internal/deposit": {"ledger", "postings"},
	// The one ordered list of the domains the core runs (ledger.Domain).
	"internal/domains": {"ledger", "internal/fx", "internal/cards", "internal/network", "internal/remittance", "internal/deposit", "internal/adjustment"},

	// Above the domains: the workers, reconciliation, the HTTP surface.
	"internal/workers": {"ledger", "internal/network", "internal/remittance", "internal/delivery"},
	// The books' reads: audit verify, the statement's reads, balances and
	// entries by reference, on the core's tables and the domains' that
	// mirror it (holds); it imports no domain, so a domain may read the
	// books through it (the card profile's balances).
	"internal/audit": {"ledger", "postings", "internal/audit/seal", "internal/audit/metadata"},
	// Beneath it, pure: the signing and Merkle tree of checkpoints and
	// period closes (an auditor's own verifier can use it alone), and the
	// stream's reader of an entry's flat metadata.
	"internal/audit/seal":     {},
	"internal/audit/metadata": {},
	// Moving a merchant between cells: the journal's connections and
	// audit verify of the copy.
	"internal/cellmove": {"ledger", "internal/audit"},
	// The merchant's bill: a reader of the bill lines the core writes.
	"internal/bill": {"ledger", "postings"},
	"reconcile":     {"ledger", "internal/audit", "postings"}, // its settlement source is its own type: app/services adapts the network
	// The /shop surface: its envelope, middleware, decoder and handlers.
	"api": {"api/views", "ledger", "internal/bill", "internal/merchant", "postings", "internal/cards", "internal/remittance",
		"internal/remittance/rules", "internal/callbackurl", "internal/delivery", "internal/httplimits", "internal/httpserve"},
	// The /shop answers' shapes: the domains' objects mapped to JSON, a
	// leaf under api (never gin, never api: TestThirdPartyImports).
	"api/views": {"postings", "internal/bill", "internal/cards", "internal/delivery", "internal/merchant",
		"internal/remittance", "internal/remittance/rules"},
	// The partners' surface: the internal network API and the sandbox's
	// handlers, on api's envelope and decoder (api/surface.go).
	"api/partner": {"api", "ledger", "internal/database", "internal/merchant", "postings", "internal/cards", "internal/network",
		"internal/remittance", "internal/remittance/rules", "internal/httpserve", "internal/testclock"},

	// The configuration (read once, handed down) and the app built from it:
	// the wiring of the commands, as packages a test can call.
	"internal/config": {"postings", "internal/callbackurl", "internal/httplimits", "internal/network", "internal/remittance/rules", "internal/cells"},
	// The cells: each cell's identity, the directory, the ids' cells
	// (docs/scaling.md); a merchant's id range is internal/merchant's SQL.
	"internal/cells": {"internal/merchant"},
	// Verify and checkpoints over cells: each cell's audit, the directory,
	// the checkpoint's tree and signature.
	"internal/cells/cellaudit": {"internal/cells", "internal/audit", "internal/audit/seal"},
	"internal/app": {"api", "api/partner", "ledger", "internal/database", "internal/audit", "internal/bill", "internal/merchant", "internal/domains", "ledger/pgcluster", "postings",
		"internal/config", "internal/httplimits", "internal/httpserve", "internal/app/services", "internal/cards", "internal/delivery",
		"internal/fx", "internal/network", "internal/railsim", "internal/remittance", "internal/workers", "internal/console", "internal/testclock",
		"internal/opsmetrics", "internal/pgha", "internal/cells", "internal/cellmove"},
	// The on-call metrics: handed the database and functions by the app.
	"internal/opsmetrics": {},
	// The merchants and domains built on one ledger: the one constructor of
	// serve, the operator's commands and the tests (internal/gatewaytest).
	"internal/app/services": {"ledger", "internal/merchant", "internal/bill", "internal/fx", "internal/cards", "internal/network", "internal/remittance", "internal/delivery",
		"reconcile"},
	// The web console (docs/console.md): a surface beside api, on the same
	// domains, with its own tables.
	"internal/console": {"ledger", "internal/audit", "internal/bill", "internal/merchant", "postings", "internal/cards", "internal/delivery", "internal/remittance", "reconcile",
		"internal/callbackurl", "internal/adjustment", "internal/deposit", "internal/console/store", "internal/console/auth",
		"internal/console/host", "internal/console/house", "internal/console/books"},
	// The contract between the console and its page packages (the guard,
	// the layout, the audit trail; text and query rules): a leaf.
	"internal/console/host": {"internal/console/store", "postings"},
	// The operator's pages, served by the console through host.Host.
	"internal/console/house": {"internal/console/host", "ledger", "postings", "internal/merchant", "internal/cards", "internal/delivery", "internal/fx",
		"internal/network", "internal/remittance", "internal/callbackurl", "internal/deposit",
		"internal/remittance/rules"}, // the sanctions page parses an upload with the CLI's parser
	// The books' pages (reconciliations, adjustments, reports, checkpoints,
	// closes, journal, verify), served by the console through host.Host.
	"internal/console/books": {"internal/console/host", "internal/console/store", "ledger", "postings", "internal/merchant", "internal/audit", "internal/bill",
		"internal/adjustment", "reconcile"},
	// The console's own tables (users, sessions, login attempts, audit
	// trail): their SQL, and nothing of the domains.
	"internal/console/store": {"postings"},
	// How the console checks who signs in: passwords, TOTP, tokens, tries.
	"internal/console/auth": {"postings"},

	// Test support and test-only packages.
	"internal/gatewaytest": {"ledger", "ledger/pgtest", "internal/app/services", "internal/audit", "internal/merchant", "internal/domains", "internal/network"},
	"internal/sim":         {},
	"internal/testseed":    {}, // a randomized test's seed flag and replay line
	// The internal API's client, and the harness of tools/bench and tools/chaos.
	"internal/netclient":     {"api/client"},
	"tools/internal/harness": {"api/client", "internal/netclient", "ledger/pgcluster"},
	"internal/contracttest":  {},
	"internal/doctest":       {},
	"internal/archtest":      {},
	// The checks of deploy/ (systemd units, container, three-node layout).
	"internal/deploytest": {},
}

// The commands wire everything: they may import any package of the module.
// The load and fault tools (tools/bench, tools/chaos) are commands too;
// nothing of the product imports them (layers_test.go).
var commands = []string{"cmd/", "api/client/receiver/cmd/", "tools/bench", "tools/chaos"}

// upwardImports returns, for a graph of direct imports (module-relative
// paths), every import the table does not allow.
func upwardImports(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		if slices.ContainsFunc(commands, func(c string) bool { return strings.HasPrefix(pkg, c) }) {
			continue
		}
		ok, placed := allowed[pkg]
		if !placed {
			out = append(out, pkg+" is not placed in the architecture (internal/archtest allowed, docs/architecture.md)")
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(ok, imp) {
				out = append(out, pkg+" imports "+imp)
			}
		}
	}
	slices.Sort(out)
	return out
}

// moduleGraph lists the direct imports of every package of the module
// (tests excluded: an external test package may use the packages above
// its own for fixtures).
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	for _, p := range modulePackages(t) {
		graph[strings.TrimPrefix(p.ImportPath, module)] = ofModule(p.Imports)
	}
	return graph
}

func TestNoUpwardImport(t *testing.T) {
	for _, why := range upwardImports(moduleGraph(t)) {
		t.Error(why)
	}
}

// The check finds an upward import and an unplaced package, or the test
// above passes whatever the imports are.
func TestUpwardImportsAreFound(t *testing.T) {
	got := upwardImports(map[string][]string{
		"ledger":         {"postings", "internal/cards"}, // the core reaching up into a domain
		"internal/cards": {"ledger"},
		"internal/new":   {"ledger"},
		"cmd/gateway":    {"api", "internal/workers"},
	})
	want := []string{"internal/new is not placed in the architecture (internal/archtest allowed, docs/architecture.md)",
		"ledger imports internal/cards"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Pure packages import nothing that does I/O beyond the standard library:
// postings only apd, the remittance rules only x/text, the callback-URL
// rules, the merchants' receiver and the answers' shapes nothing; the HTTP
// surface never talks to PostgreSQL itself.
func TestThirdPartyImports(t *testing.T) {
	noPostgreSQL := func(imp string) bool {
		return !strings.HasPrefix(imp, "github.com/uptrace/bun") && !strings.HasPrefix(imp, "github.com/jackc/pgx")
	}
	rules := map[string]func(imp string) bool{
		"postings":                      func(imp string) bool { return imp == "github.com/cockroachdb/apd/v3" },
		"internal/remittance/rules":     func(imp string) bool { return strings.HasPrefix(imp, "golang.org/x/text/") },
		"internal/callbackurl":          func(string) bool { return false },
		"api/client/receiver":           func(string) bool { return false },
		"api/client/receiver/signature": func(string) bool { return false },
		"api":                           noPostgreSQL,
		"api/views":                     func(string) bool { return false }, // shapes: no gin, no database
		"api/partner":                   noPostgreSQL,
	}
	for _, p := range modulePackages(t) {
		ok := rules[strings.TrimPrefix(p.ImportPath, module)]
		if ok == nil {
			continue
		}
		for _, imp := range p.Imports {
			if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && !strings.HasPrefix(imp, module) && !ok(imp) {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
	}
}
