package cellmove

import (
	"context"
	"testing"
	"time"
)

// The removal at the source waits RemoveAfter after the switch (the
// tombstone and the forwarding written), so that every router forwards
// the merchant's network messages to the target before its rows leave
// the source. Before, a clearing routed by a router whose cache predated
// the switch reached the source after the removal and was answered "not
// found" (code 999), a final answer for a hold that was then cleared in
// the target (chaos move).
func TestRemovalWaitsAfterTheSwitch(t *testing.T) {
	c := newTwoCells(t)
	business(t, c.g, c.m.ID)
	const wait = 1500 * time.Millisecond
	c.mv.RemoveAfter = wait
	var switched, removed time.Time
	c.mv.step = func(name string) {
		switch name {
		case "tombstone":
			switched = time.Now()
		case "remove":
			removed = time.Now()
		}
	}
	if _, err := c.mv.Move(context.Background(), c.m.ShopNo); err != nil {
		t.Fatal(err)
	}
	if switched.IsZero() || removed.Sub(switched) < wait {
		t.Errorf("the removal began %s after the switch, want at least %s", removed.Sub(switched), wait)
	}
}
