package cellmove

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"
)

// The journal's guard lets only gateway_mover delete, only a merchant
// whose tombstone exists (not yet removed) or whose arrival is still being
// copied, and never update (the fence: fence_test.go).
func TestOnlyTheMoverPassesTheGuard(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	ctx := context.Background()
	other := c.m.ID + 1000
	tomb := func(m int64) string {
		return "insert into cellmove_tombstones (move_id, shop_no, merchant_id, last_seq, to_cell, moved_at) values (" +
			"(select coalesce(max(move_id), 0) + 1 from cellmove_tombstones), 'SHX', " + itoa(m) + ", 0, 'b', now())"
	}
	cases := []struct {
		name  string
		setup []string // run first, as the test's user
		role  bool     // the statement runs as gateway_mover
		stmt  string
		ok    bool
	}{
		{"no role, tombstone", []string{tomb(c.m.ID)}, false, "delete from postings where merchant_id = " + itoa(c.m.ID), false},
		{"role, no tombstone", nil, true, "delete from postings where merchant_id = " + itoa(c.m.ID), false},
		{"role, another merchant's tombstone", []string{tomb(other)}, true, "delete from postings where merchant_id = " + itoa(c.m.ID), false},
		{"role, removed tombstone", []string{tomb(c.m.ID), "update cellmove_tombstones set removed_at = now()"}, true, "delete from postings where merchant_id = " + itoa(c.m.ID), false},
		{"role, tombstone, update", []string{tomb(c.m.ID)}, true, "update entries set kind = kind where merchant_id = " + itoa(c.m.ID), false},
		{"role, tombstone, truncate", []string{tomb(c.m.ID)}, true, "truncate postings cascade", false},
		{"role, tombstone, delete", []string{tomb(c.m.ID)}, true, "delete from postings where merchant_id = " + itoa(c.m.ID), true},
		{"role, arrival being copied, delete", []string{arrival(c.m.ID, "copying")}, true, "delete from postings where merchant_id = " + itoa(c.m.ID), true},
		{"role, arrival complete, delete", []string{arrival(c.m.ID, "arrived")}, true, "delete from postings where merchant_id = " + itoa(c.m.ID), false},
		{"role, arrival being copied, legacy insert", []string{arrival(c.m.ID, "copying")}, true, "insert into bill_rules_legacy values (" + itoa(c.m.ID) + ", 1)", true},
		{"role, no arrival, legacy insert", nil, true, "insert into bill_rules_legacy values (" + itoa(c.m.ID) + ", 1)", false},
		{"role, tombstone, history", []string{tomb(c.m.ID)}, true, "delete from remittance_history where tx_id in (select tx_id from remittances where merchant_id = " + itoa(c.m.ID) + ")", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.src.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				for _, q := range tc.setup {
					if _, err := tx.ExecContext(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
				if tc.role {
					if _, err := tx.ExecContext(ctx, "set local role "+moverRole); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := tx.ExecContext(ctx, tc.stmt); err != nil {
					return err
				}
				return errRollback // leave nothing behind
			})
			if passed := err == errRollback; passed != tc.ok {
				t.Errorf("passed=%v, want %v (%v)", passed, tc.ok, err)
			}
			if !tc.ok && err != nil && err != errRollback && !strings.Contains(err.Error(), "append-only") &&
				!strings.Contains(err.Error(), "permission denied") { // the role has no TRUNCATE at all
				t.Errorf("refused with %v, not by the guard", err)
			}
		})
	}
}

type rollbackErr struct{}

func (rollbackErr) Error() string { return "rollback" }

var errRollback error = rollbackErr{}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func arrival(m int64, state string) string {
	return "insert into cellmove_arrivals (merchant_id, shop_no, from_cell, state) values (" + itoa(m) + ", 'SHX', 'a', '" + state + "')"
}
