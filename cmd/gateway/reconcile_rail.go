package main

import (
	"context"
	"os"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/reconcile"
)

// `gateway reconcile rail`: the rail's settlement report against the
// REMIT_SETTLE and REMIT_RETURN entries of its period (docs/finance.md,
// "Rail settlement report").
func cmdReconcileRail(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reconcile rail --file REPORT.csv", "Match the rail's settlement report (CSV: tx_id,status,amount,fee,currency,date,\n"+
		"after a first line '# period: YYYY-MM-DD[/YYYY-MM-DD]') against every REMIT_SETTLE and REMIT_RETURN entry of its\n"+
		"period, and record a report that matches. Exit status 0 when everything matched, 1 on discrepancies,\n"+
		"2 when the input cannot be reconciled (docs/finance.md).")
	rf := newReconcileFlags(fs, "the rail's report")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	return rf.run(ctx, e, func(s *app.Store, l *app.Services, f *os.File, a reconcileArgs) (reconcileReport, error) {
		return reportOf(reconcile.Rail(ctx, l.RailEntries(), reconcile.NewRecords(s.DB.DB), reconcile.RailInput{
			File: f, Name: a.Name, Period: a.Period, Actor: a.Actor}))
	})
}
