package cellmove

import (
	"context"
	"testing"
)

// A write outside the journal that lands at the source after the tail
// round — a callback's attempt, claimed before the pause and recorded
// after the round — makes the counts differ at the verification; the tail
// is copied again and the move finishes with the attempt in the target.
// Before, the move failed there, and so did every resume while such
// writes kept coming (chaos move: "delivery_attempts has 73 rows of the
// merchant in a1 and 72 in b2").
func TestTailCopiesAgainAfterALateWrite(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	ctx := context.Background()
	attempts := func() int64 { return merchantRows(t, c.src, c.m.ID)["delivery_attempts"] }
	before := attempts()
	late := false
	c.mv.step = func(name string) {
		if name != "verify" || late {
			return
		}
		late = true
		res, err := c.src.ExecContext(ctx, `insert into delivery_attempts (merchant_id, event_seq, window_start, attempt, at, duration_ms, outcome)
			select merchant_id, event_seq, created_at, 1, now(), 1, 'DELIVERED' from events where merchant_id = ? order by event_seq limit 1`, c.m.ID)
		if err != nil {
			t.Errorf("the late attempt: %v", err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Errorf("the late attempt: %d rows", n)
		}
	}
	if _, err := c.mv.Move(ctx, c.m.ShopNo); err != nil {
		t.Fatalf("the move with an attempt recorded after its tail: %v", err)
	}
	if !late {
		t.Fatal("the move never verified")
	}
	if got := merchantRows(t, c.dst, c.m.ID)["delivery_attempts"]; got != before+1 {
		t.Errorf("the target has %d attempts of the merchant, want %d (the late one included)", got, before+1)
	}
}
