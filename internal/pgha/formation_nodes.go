package pgha

import (
	"context"
	"database/sql"
	"fmt"
)

// A formation has two data nodes by default, as `make run-ha` has always
// had, or three (issue 31, point 3): with three, number_sync_standbys is
// 1, so that a COMMIT waits for ANY 1 of the two standbys and losing one
// node still leaves two copies of every acknowledged write (with two,
// pg_auto_failover refuses 1 and the primary falls back to wait_primary,
// one copy, when its standby is lost). The monitor sets 1 itself when the
// third node joins ("Setting number_sync_standbys to 1 … now that we have
// 2/2 standby nodes set with replication-quorum"); requireSyncStandby
// checks it rather than trusting that.

// dataNodes is how many data nodes a new formation gets: DataNodes, else
// one per port after the monitor's, else 2.
func (o FormationOptions) dataNodes() (int, error) {
	n := o.DataNodes
	if o.Ports != nil {
		if n != 0 && n != len(o.Ports)-1 {
			return 0, fmt.Errorf("pgha: %d ports for %d data nodes: want the monitor's and one per node", len(o.Ports), n)
		}
		n = len(o.Ports) - 1
	}
	if n == 0 {
		n = 2
	}
	if n != 2 && n != 3 {
		return 0, fmt.Errorf("pgha: a formation has 2 or 3 data nodes, not %d", n)
	}
	return n, nil
}

// SyncStandbys is the monitor's number_sync_standbys of the formation.
func (f *Formation) SyncStandbys(ctx context.Context) (int, error) {
	db, err := sql.Open("pgx", f.monitorAdminURL())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "select number_sync_standbys from pgautofailover.formation where formationid = 'default'").Scan(&n)
	return n, err
}

// requireSyncStandby makes sure number_sync_standbys is 1 once three data
// nodes run, and waits for every node to settle as primary or secondary:
// the monitor applies a new setting — its own when the third node joins,
// or ours — through apply_settings on the primary, and a formation handed
// over in the middle of that has no settled primary (seen in
// TestFormationThreeNodes).
func (f *Formation) requireSyncStandby(ctx context.Context) error {
	if len(f.Nodes) < 3 {
		return nil
	}
	if n, err := f.SyncStandbys(ctx); err != nil || n != 1 {
		db, err := sql.Open("pgx", f.monitorAdminURL())
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "select pgautofailover.set_formation_number_sync_standbys('default', 1)"); err != nil {
			return fmt.Errorf("pgha: number_sync_standbys 1 on the monitor: %w", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, nodeStartMax)
	defer cancel()
	for _, n := range f.Nodes {
		if err := f.WaitState(wctx, n.Name, "primary", "secondary"); err != nil {
			return err
		}
	}
	fmt.Fprintln(f.opts.Log, "pgha: three data nodes, number_sync_standbys = 1: a commit waits for one of the two standbys")
	return nil
}
