package domains_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// coreBefore and coreAfter are the tables the core writes in a batch's
// flush before the domains' (accounts, the journal, balances, heads,
// idempotency keys) and after them (the outbox): ledger/flush.go.
var (
	coreBefore = []string{"accounts", "entries", "postings", "bill_lines", "balances", "ledger_heads", "idempotency_keys"}
	coreAfter  = []string{"events", "deliveries"}
)

// flushOrder lists the tables a batch writes, in the order it writes them.
func flushOrder(ds []ledger.Domain) []string {
	order := slices.Clone(coreBefore)
	for _, d := range ds {
		order = append(order, d.Tables...)
	}
	return append(order, coreAfter...)
}

// foreignKeys are the schema's foreign keys, child table to parent table.
func foreignKeys(t *testing.T) [][2]string {
	t.Helper()
	db := pgtest.NewDB(t)
	rows, err := db.QueryContext(context.Background(), `
		select c.conrelid::regclass::text, c.confrelid::regclass::text
		from pg_constraint c join pg_namespace n on n.oid = c.connamespace
		where c.contype = 'f' and n.nspname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var fks [][2]string
	for rows.Next() {
		var child, parent string
		if err := rows.Scan(&child, &parent); err != nil {
			t.Fatal(err)
		}
		fks = append(fks, [2]string{child, parent})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fks
}

// misordered returns each foreign key whose child table the flush writes
// before its parent table: inserting the child's new rows first would
// violate the key.
func misordered(order []string, fks [][2]string) []string {
	var out []string
	for _, fk := range fks {
		child, parent := slices.Index(order, fk[0]), slices.Index(order, fk[1])
		if child >= 0 && parent >= 0 && child < parent {
			out = append(out, fk[0]+" flushes before "+fk[1]+", which it references")
		}
	}
	return out
}

// The domains flush in the order of domains.All, after the core's journal
// and before its outbox; every table flushes after each table it
// references, or the first batch that creates both rows fails at run time.
func TestFlushOrderFollowsTheForeignKeys(t *testing.T) {
	fks := foreignKeys(t)
	order := flushOrder(domains.All())
	for _, why := range misordered(order, fks) {
		t.Error(why)
	}
	// Every table a domain lists exists and has a foreign key to check, or
	// the list could name tables the schema does not have.
	seen := map[string]bool{}
	for _, fk := range fks {
		seen[fk[0]], seen[fk[1]] = true, true
	}
	for _, d := range domains.All() {
		for _, tb := range d.Tables {
			if !seen[tb] {
				t.Errorf("domain %s lists table %s, which no foreign key names", d.Name, tb)
			}
		}
	}
	// The check sees a wrong order: the network listed before the cards
	// its authorizations reference.
	swapped := domains.All()
	ci := slices.IndexFunc(swapped, func(d ledger.Domain) bool { return d.Name == "cards" })
	ni := slices.IndexFunc(swapped, func(d ledger.Domain) bool { return d.Name == "network" })
	swapped[ci], swapped[ni] = swapped[ni], swapped[ci]
	if got := misordered(flushOrder(swapped), fks); !slices.ContainsFunc(got, func(s string) bool {
		return strings.HasPrefix(s, "authorizations flushes before cards")
	}) {
		t.Errorf("the network before the cards is not found: %q", got)
	}
}
