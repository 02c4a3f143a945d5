package main

// `gateway reconcile bank`: a bank statement against a merchant's deposits
// (docs/finance.md, "Bank statement reconciliation"), and the report's
// output and exit status shared by every reconcile command.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/reconcile"
)

func cmdReconcileBank(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reconcile bank --file STATEMENT.csv --shop-no SHOP", "Match a bank statement (CSV: value_date,amount,currency,reference,\n"+
		"after a first line '# period: YYYY-MM-DD[/YYYY-MM-DD]') against every deposit of the merchant in its period,\n"+
		"by the deposits' bank references, and record a statement that matches. Exit status 0 when everything\n"+
		"matched, 1 on discrepancies, 2 when the input cannot be reconciled (docs/finance.md).")
	rf := newReconcileFlags(fs, "the bank statement")
	shopNo := fs.String("shop-no", "", "the merchant whose deposits the statement's account receives (required)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *shopNo == "" {
		return usageError("--file and --shop-no are required")
	}
	return rf.run(ctx, e, func(s *app.Store, l *app.Services, f *os.File, a reconcileArgs) (reconcileReport, error) {
		m, err := merchantOfFlag(ctx, l, *shopNo)
		if err != nil {
			return nil, err
		}
		return reportOf(reconcile.Bank(ctx, reconcile.JournalDeposits{DB: s.DB}, reconcile.NewRecords(s.DB.DB), reconcile.BankInput{
			File: f, Name: a.Name, Merchant: m.ID, ShopNo: m.ShopNo, Period: a.Period, Actor: a.Actor}))
	})
}

// reconcileReport is a reconciliation's report as the commands print it.
type reconcileReport interface {
	WriteText(io.Writer) error
	OK() bool
}

// reconcileFlags are the flags every file reconciliation takes beyond
// its own: the file, its period when the file states none, who
// reconciles, and JSON.
type reconcileFlags struct {
	file, day, from, to, by *string
	asJSON                  *bool
}

// newPeriodFlags are the flags of a file's period when the file states
// none (day: --day's help), who reconciles, and JSON; newReconcileFlags
// adds --file.
func newPeriodFlags(fs *flag.FlagSet, day string) *reconcileFlags {
	return &reconcileFlags{
		day:    fs.String("day", "", day),
		from:   fs.String("from", "", "the period's first day, with --to, for a file without a period line"),
		to:     fs.String("to", "", "the period's last day, included"),
		by:     fs.String("by", "", "who reconciles, as recorded (default: cli:<OS user>)"),
		asJSON: fs.Bool("json", false, "print the report as JSON"),
	}
}

func newReconcileFlags(fs *flag.FlagSet, what string) *reconcileFlags {
	rf := newPeriodFlags(fs, "the period's one day, YYYY-MM-DD (UTC), for a file without a period line")
	rf.file = fs.String("file", "", what+", CSV (required)")
	return rf
}

// reconcileArgs are what run hands a reconciliation beyond the file.
type reconcileArgs struct {
	Name   string // the file's base name, as recorded
	Period reconcile.Period
	Actor  string
}

// run checks --file and reconciles it.
func (rf *reconcileFlags) run(ctx context.Context, e *env,
	do func(*app.Store, *app.Services, *os.File, reconcileArgs) (reconcileReport, error)) error {
	if *rf.file == "" {
		return usageError("--file is required")
	}
	return rf.reconcile(ctx, e, *rf.file, "the file does not reconcile", do)
}

// reconcile checks the period flags, opens the file at path and the
// ledger, reconciles with do, prints the report and exits with its
// verdict's status: 0 matched, 1 discrepancies (failed says so), 2
// unusable.
func (rf *reconcileFlags) reconcile(ctx context.Context, e *env, path, failed string,
	do func(*app.Store, *app.Services, *os.File, reconcileArgs) (reconcileReport, error)) error {
	period, err := settlementPeriodFlags(*rf.day, *rf.from, *rf.to)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
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
	rep, err := do(s, l, f, reconcileArgs{Name: filepath.Base(path), Period: period, Actor: cliActor(*rf.by)})
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return err
	case err != nil:
		return reconcileFailed(e, *rf.asJSON, path, err)
	}
	return printReconciliation(e, *rf.asJSON, rep, failed)
}

// reconcileFailed reports a reconciliation that produced no report: an
// unusable input (exit status 2, its verdict printed), or the machine's
// fault.
func reconcileFailed(e *env, asJSON bool, path string, err error) error {
	if !reconcile.IsUnusable(err) {
		return cliError(err)
	}
	v := reconcile.UnusableVerdict(err)
	if asJSON {
		_ = printJSON(e, map[string]any{"verdict": v})
	} else {
		fmt.Fprintln(e.stdout, v.Line())
	}
	return &exitError{code: v.Status, msg: fmt.Sprintf("%s: %s", path, err)}
}

// printReconciliation prints a report, as text (its verdict last) or JSON,
// and exits with the verdict's status.
func printReconciliation(e *env, asJSON bool, rep reconcileReport, failed string) error {
	var err error
	if asJSON {
		err = printJSON(e, rep)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		return &exitError{code: reconcile.ExitDiscrepancies, msg: failed}
	}
	return nil
}
