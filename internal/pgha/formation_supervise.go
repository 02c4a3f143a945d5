package pgha

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Supervision of a formation's keepers by the process that started them
// (`ha run`): a keeper that exits is run again, after a backoff that
// doubles with each recent exit, and at most RestartsMax times within
// RestartWindow; past that, Supervise returns an error and the caller
// stops everything rather than run a formation with a node that cannot
// stay up. Issue 31, finding 4: a dead keeper was never restarted, and
// rejoining took an undocumented pg_autoctl run with three XDG variables.

// Supervision's bounds.
const (
	RestartBackoffMin = time.Second
	RestartBackoffMax = 30 * time.Second
	RestartsMax       = 5
	RestartWindow     = 10 * time.Minute
	// superviseTick is how often the keepers are looked at: an exit is
	// noticed within it.
	superviseTick = 250 * time.Millisecond
)

// Supervise runs until ctx ends (nil) or a keeper exceeds its restarts
// (an error naming it and its log). Progress lines go to log.
func (f *Formation) Supervise(ctx context.Context, log io.Writer) error {
	keepers := append([]*Keeper{f.Monitor}, f.Nodes...)
	exits := map[string][]time.Time{}
	t := time.NewTicker(superviseTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, k := range keepers {
			if k.Running() {
				continue
			}
			now := time.Now()
			recent := exits[k.Name][:0]
			for _, at := range exits[k.Name] {
				if now.Sub(at) < RestartWindow {
					recent = append(recent, at)
				}
			}
			recent = append(recent, now)
			exits[k.Name] = recent
			if len(recent) > RestartsMax {
				return fmt.Errorf("pgha: the keeper of %s exited %d times within %s; not restarting it (log %s):\n%s",
					k.Name, len(recent), RestartWindow, k.log, tailFile(k.log, 20))
			}
			wait := min(RestartBackoffMin<<(len(recent)-1), RestartBackoffMax)
			fmt.Fprintf(log, "ha: the keeper of %s exited; restarting it in %s (restart %d of at most %d within %s; log %s)\n",
				k.Name, wait, len(recent), RestartsMax, RestartWindow, k.log)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			if err := f.Restart(k); err != nil {
				fmt.Fprintf(log, "ha: restarting the keeper of %s: %v\n", k.Name, err)
			}
		}
	}
}
