package cellmove

import (
	"context"
	"testing"

	"github.com/uptrace/bun"
)

// merchantIDs are the ids of the merchant's cards, authorizations and
// remittances in db: every id a message from outside names (the network's
// card number and authorization id, the rail's txId).
func merchantIDs(t *testing.T, db bun.IDB, m int64) map[string]string {
	t.Helper()
	var rows []struct {
		Kind string
		ID   string
	}
	if err := db.NewRaw(`select 'card' as kind, card_no as id from cards where merchant_id = ?0
		union all select 'authorization', auth_id from authorizations where merchant_id = ?0
		union all select 'remittance', tx_id from remittances where merchant_id = ?0`, m).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.ID] = r.Kind
	}
	return out
}

// A moved merchant's source forwards every id a network or rail message
// may name — its cards, its authorizations and its remittances — to the
// target; a merchant that moves back has its ids' forwarding removed where
// it arrives, and forwarded by the cell it left.
func TestForwardsCoverEveryMessageID(t *testing.T) {
	c := newTwoCells(t)
	ctx := context.Background()
	business(t, c.g, c.m.ID)
	ids := merchantIDs(t, c.src, c.m.ID)
	kinds := map[string]bool{}
	for _, k := range ids {
		kinds[k] = true
	}
	if len(kinds) != 3 {
		t.Fatalf("the fixture's ids %v: want a card, an authorization and a remittance", ids)
	}
	forwarded := func(db bun.IDB, cell, wantTo string, wantFound bool) {
		t.Helper()
		for id, kind := range ids {
			to, found, err := Forward(ctx, db, id)
			if err != nil || found != wantFound || to != wantTo {
				t.Errorf("cell %s forwards %s %s to %q (found %v, %v), want %q (found %v)", cell, kind, id, to, found, err, wantTo, wantFound)
			}
		}
	}
	if _, err := c.mv.Move(ctx, c.m.ShopNo); err != nil {
		t.Fatal(err)
	}
	forwarded(c.src, "a", "b", true)
	forwarded(c.dst, "b", "", false)

	back := &Mover{From: Cell{Name: "b", DB: c.dst}, To: Cell{Name: "a", DB: c.src}, Dir: c.dir}
	if _, err := back.Move(ctx, c.m.ShopNo); err != nil {
		t.Fatal(err)
	}
	forwarded(c.src, "a", "", false)
	forwarded(c.dst, "b", "a", true)
}
