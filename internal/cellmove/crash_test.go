package cellmove

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/paygate/gateway/internal/gatewaytest"
)

// steps are the points Move calls its step hook at, in order.
var steps = []string{"copy", "begin_move", "pause", "tail", "verify", "switch", "tombstone", "remove"}

// midRound are points inside the first round, between one table's rows
// and the next's: the round's transaction is rolled back whole.
var midRound = []string{"write:postings", "write:cards", "write:events"}

// killAt runs a move whose context is cancelled at the step, as a mover
// killed there, and checks that it stopped.
func killAt(t *testing.T, c *twoCells, step string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hit := false
	c.mv.step = func(name string) {
		if name == step && !hit {
			hit = true
			cancel()
		}
	}
	_, err := c.mv.Move(ctx, c.m.ShopNo)
	c.mv.step = nil
	if !hit || !errors.Is(err, context.Canceled) {
		t.Fatalf("killed at %s: hit=%v, err %v", step, hit, err)
	}
}

// A mover killed at any step resumes: the move finishes with the target's
// head the source's, the source emptied, both databases verified.
func TestKilledMoveResumes(t *testing.T) {
	for _, step := range append(slices.Clone(steps), midRound...) {
		t.Run(step, func(t *testing.T) {
			c := newTwoCells(t)
			business(t, c.g, c.m.ID)
			before, err := readHead(context.Background(), c.src, c.m.ID)
			if err != nil {
				t.Fatal(err)
			}
			killAt(t, c, step)
			res, err := c.mv.Move(context.Background(), c.m.ShopNo)
			if err != nil {
				t.Fatalf("resuming after %s: %v", step, err)
			}
			if !res.Resumed {
				t.Errorf("the move after %s was not resumed", step)
			}
			after, err := readHead(context.Background(), c.dst, c.m.ID)
			if err != nil || !after.equal(before) {
				t.Errorf("target head %+v (%v), the source's %+v", after, err, before)
			}
			if left := merchantRows(t, c.src, c.m.ID); len(left) != 0 {
				t.Errorf("the source still has %v", left)
			}
			if cell, moving, _ := c.dir.Lookup(c.m.ShopNo); cell != "b" || moving {
				t.Errorf("directory: %s moving=%v", cell, moving)
			}
			verifyAll(t, c.src)
			verifyAll(t, c.dst)
		})
	}
}

// A mover killed before the copy verified rolls back instead: the target
// holds nothing of the merchant, the merchant is active in its cell again
// and writes there (the fence is lifted); one killed later may not.
func TestKilledMoveRollsBack(t *testing.T) {
	for i, step := range steps {
		t.Run(step, func(t *testing.T) {
			c := newTwoCells(t)
			business(t, c.g, c.m.ID)
			rows := merchantRows(t, c.src, c.m.ID)
			killAt(t, c, step)
			err := c.mv.Rollback(context.Background(), c.m.ShopNo)
			if i > slices.Index(steps, "verify") {
				if err == nil {
					t.Fatalf("a move killed at %s, past verification, rolled back", step)
				}
				return
			}
			if err != nil {
				t.Fatalf("rolling back after %s: %v", step, err)
			}
			if got := merchantRows(t, c.dst, c.m.ID); len(got) != 0 {
				t.Errorf("the target still has %v", got)
			}
			if got := merchantRows(t, c.src, c.m.ID); len(got) != len(rows) {
				t.Errorf("the source has %v, had %v", got, rows)
			}
			if cell, moving, _ := c.dir.Lookup(c.m.ShopNo); cell != "a" || moving {
				t.Errorf("directory: %s moving=%v", cell, moving)
			}
			gatewaytest.Deposit(t, c.g.Ledger, c.m.ID, "USD", 1_00)
			verifyAll(t, c.src)
			verifyAll(t, c.dst)
			// And it can move again.
			if _, err := c.mv.Move(context.Background(), c.m.ShopNo); err != nil {
				t.Fatalf("moving again: %v", err)
			}
		})
	}
}
