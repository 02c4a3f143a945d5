package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// The three-node losses (issue 31, point 3; docs/ha.md "Chaos"): a
// formation of three data nodes (number_sync_standbys 1: a commit waits
// for ANY 1 of the two standbys), made after the two-node scenarios have
// stopped theirs so that the machine runs one formation at a time, on
// free ports below the ephemeral range (pgha.FreePorts), without a backup
// repository (no scenario here restores).
//   - standby3: a standby killed under load; every write keeps committing
//     on the primary and the other standby; the single-copy window must be
//     zero;
//   - primary3: the primary killed under load; one of the two standbys is
//     promoted with the other as its synchronous standby; nothing lost or
//     doubled; the window is measured and reported.

// runHA3Scenarios runs the three-node scenarios wanted for the first seed.
func runHA3Scenarios(ctx context.Context, e *env, want map[string]bool, seeds []uint64, o haOptions, report func(*result)) error {
	if _, err := pgha.FindPgAutoctl(); err != nil {
		return err
	}
	ports, err := pgha.FreePorts(4)
	if err != nil {
		return err
	}
	e.logf("ha: creating a three-node pg_auto_failover formation (monitor, primary, two standbys) on ports %v", ports)
	start := time.Now()
	opts := pgha.FormationOptions{Dir: filepath.Join(e.tmp, "ha3"), Ports: ports}
	if e.verbose {
		opts.Log = e.out
	}
	f, err := pgha.StartFormation(ctx, opts)
	if err != nil {
		return fmt.Errorf("the three-node formation: %w", err)
	}
	defer f.Stop()
	h := &haFormation{f: f, made: time.Since(start)}
	e.logf("ha: three-node formation ready in %s", h.made.Round(time.Millisecond))
	if want["standby3"] && ctx.Err() == nil {
		e.logf("%s: seed %d", loseStandby3, seeds[0])
		report(runHALoss(ctx, e, h, seeds[0], loseStandby3, o))
	}
	if want["primary3"] && ctx.Err() == nil {
		e.logf("%s: seed %d", losePrimary3, seeds[0])
		report(runHALoss(ctx, e, h, seeds[0], losePrimary3, o))
	}
	return nil
}
