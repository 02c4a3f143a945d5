package cellmove

import (
	"bytes"
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
)

// verifyAll runs audit verify over the whole database, every merchant.
func verifyAll(t *testing.T, db *bun.DB) *audit.Report {
	t.Helper()
	l := ledger.New(db, ledger.Config{})
	defer l.Close()
	return gatewaytest.Verify(t, l)
}

func merchantRows(t *testing.T, db *bun.DB, m int64) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	all := append(append([]table{}, removeAlso...), tables...)
	ns, err := counts(context.Background(), db, all, m)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ns {
		if n > 0 {
			out[all[i].name] = n
		}
	}
	return out
}

// A merchant with cards, holds, a remittance, events, bill lines and
// idempotency keys moves whole: the target has every row the source had,
// its chain verifies and ends at the source's head, the source keeps only
// the tombstone, and the merchant goes on in the target.
func TestMoveCopiesEverythingAndRemovesTheSource(t *testing.T) {
	c := newTwoCells(t)
	ctx := context.Background()
	for range 3 {
		business(t, c.g, c.m.ID)
	}
	before, err := readHead(ctx, c.src, c.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	rows := merchantRows(t, c.src, c.m.ID)
	for _, want := range []string{"cards", "authorizations", "remittances", "remittance_history", "events", "deliveries", "bill_lines", "idempotency_keys", "webhook_endpoints"} {
		if rows[want] == 0 {
			t.Fatalf("the fixture has no %s: %v", want, rows)
		}
	}
	res, err := c.mv.Move(ctx, c.m.ShopNo)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Head.equal(before) {
		t.Errorf("moved head %+v, the source's was %+v", res.Head, before)
	}
	if got := merchantRows(t, c.dst, c.m.ID); len(got) != len(rows) {
		t.Errorf("target rows %v, source had %v", got, rows)
	} else {
		for k, v := range rows {
			if got[k] != v {
				t.Errorf("%s: target %d rows, source had %d", k, got[k], v)
			}
		}
	}
	if left := merchantRows(t, c.src, c.m.ID); len(left) != 0 {
		t.Errorf("the source still has %v", left)
	}
	var ts struct {
		LastSeq  int64
		LastHash []byte
		ToCell   string
	}
	if err := c.src.NewRaw("select last_seq, last_hash, to_cell from cellmove_tombstones where shop_no = ? and removed_at is not null", c.m.ShopNo).
		Scan(ctx, &ts.LastSeq, &ts.LastHash, &ts.ToCell); err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	if ts.LastSeq != before.Seq || !bytes.Equal(ts.LastHash, before.Hash) || ts.ToCell != "b" {
		t.Errorf("tombstone %+v, head %+v", ts, before)
	}
	if cell, moving, _ := c.dir.Lookup(c.m.ShopNo); cell != "b" || moving {
		t.Errorf("directory: %s moving=%v", cell, moving)
	}
	verifyAll(t, c.src)
	verifyAll(t, c.dst)
	// The merchant goes on in its new cell, with the same keys.
	g2 := gatewaytest.New(t, c.dst, gatewaytest.Options{Sealer: c.sealer})
	business(t, g2, c.m.ID)
	verifyAll(t, c.dst)
}
