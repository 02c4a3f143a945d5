package audit_test

import (
	"context"
	"strings"
	"testing"
)

// Accounts and checkpoints are append-only like the journal (sql/0021): an
// account's identity and a stored checkpoint cannot be changed, deleted or
// truncated by the gateway's own user; an account's created_at, which
// nothing derives from, stays writable.
func TestAccountsAndCheckpointsAreAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newVerifyFixture(t)
	if _, err := f.l.DB().ExecContext(ctx, `insert into audit_checkpoints (created_at, key_id, tree_size, root, heads, signed, signature)
		values (now(), 'k', 0, sha256(''), '[]', '\x00', decode(repeat('00', 64), 'hex'))`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stmt    string
		refused bool
	}{
		{"update accounts set address = address || ':x' where id = ?", true},
		{"update accounts set type = 'fee_revenue' where id = ?", true},
		{"update accounts set currency = 'EUR' where id = ?", true},
		{"update accounts set merchant_id = merchant_id + 1 where id = ?", true},
		{"update accounts set card_no = 'crd_x' where id = ?", true},
		{"delete from accounts where id = ?", true},
		{"truncate accounts cascade", true},
		{"update audit_checkpoints set root = sha256(root) where ? > 0", true},
		{"delete from audit_checkpoints where ? > 0", true},
		{"truncate audit_checkpoints", true},
		{"update accounts set created_at = created_at where id = ?", false},
	} {
		var args []any
		if strings.Contains(tc.stmt, "?") {
			args = append(args, f.fundUSD)
		}
		_, err := f.l.DB().ExecContext(ctx, tc.stmt, args...)
		if refused := err != nil && strings.Contains(err.Error(), "append-only"); refused != tc.refused {
			t.Errorf("%q: err = %v, want refused %v", tc.stmt, err, tc.refused)
		}
	}
	mustVerify(t, f.l.Ledger)
}
