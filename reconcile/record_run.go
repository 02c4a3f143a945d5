package reconcile

import "context"

// recordMatched records a file that matched completely (records.go): the
// same file again is its earlier run (already); an item another run
// recorded meanwhile is returned in taken, with its claim, and nothing is
// recorded — the caller reports it as already_reconciled.
func recordMatched(ctx context.Context, rec *Records, sameRun *Run, run Run, sum []byte,
	items []RecordedItem) (recorded *Run, already bool, taken map[int64]Claim, err error) {
	if sameRun != nil {
		return sameRun, true, nil, nil
	}
	run.FileName, run.Actor = recordText(run.FileName, "(unnamed)"), recordText(run.Actor, "(unknown)")
	res, err := rec.Record(ctx, run, sum, items)
	if err != nil || len(res.Taken) == 0 {
		return res.Run, res.Existing, nil, err
	}
	taken, err = rec.Claims(ctx, run.Kind, res.Taken)
	return nil, false, taken, err
}
