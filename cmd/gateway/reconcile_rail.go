package main

import (
	"context"
	"os"
	"path/filepath"

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
	file := fs.String("file", "", "the rail's report, CSV (required)")
	day := fs.String("day", "", "the report's day, YYYY-MM-DD (UTC), for a file without a period line")
	from := fs.String("from", "", "the period's first day, with --to, for a file without a period line")
	to := fs.String("to", "", "the period's last day, included")
	by := fs.String("by", "", "who reconciles, as recorded (default: cli:<OS user>)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *file == "" {
		return usageError("--file is required")
	}
	period, err := settlementPeriodFlags(*day, *from, *to)
	if err != nil {
		return err
	}
	f, err := os.Open(*file)
	if err != nil {
		return &exitError{code: reconcile.ExitUnusable, msg: err.Error()}
	}
	defer f.Close()
	s, l, err := openReconcileLedger(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	defer l.Close()
	rep, err := reconcile.Rail(ctx, l.RailEntries(), reconcile.NewRecords(s.DB.DB), reconcile.RailInput{
		File: f, Name: filepath.Base(*file), Period: period, Actor: cliActor(*by)})
	if err != nil {
		return reconcileFailed(e, *asJSON, *file, err)
	}
	return printReconciliation(e, *asJSON, rep, rep.Verdict, "the rail report does not reconcile")
}
