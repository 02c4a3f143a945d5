package main

// `gateway reconcile bank`: a bank statement against a merchant's deposits
// (docs/finance.md, "Bank statement reconciliation"), and the report's
// output and exit status shared by every reconcile command.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/paygate/gateway/reconcile"
)

func cmdReconcileBank(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reconcile bank --file STATEMENT.csv --shop-no SHOP", "Match a bank statement (CSV: value_date,amount,currency,reference,\n"+
		"after a first line '# period: YYYY-MM-DD[/YYYY-MM-DD]') against every deposit of the merchant in its period,\n"+
		"by the deposits' bank references, and record a statement that matches. Exit status 0 when everything\n"+
		"matched, 1 on discrepancies, 2 when the input cannot be reconciled (docs/finance.md).")
	file := fs.String("file", "", "the bank statement, CSV (required)")
	shopNo := fs.String("shop-no", "", "the merchant whose deposits the statement's account receives (required)")
	day := fs.String("day", "", "the statement's day, YYYY-MM-DD (UTC), for a file without a period line")
	from := fs.String("from", "", "the period's first day, with --to, for a file without a period line")
	to := fs.String("to", "", "the period's last day, included")
	by := fs.String("by", "", "who reconciles, as recorded (default: cli:<OS user>)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *file == "" || *shopNo == "" {
		return usageError("--file and --shop-no are required")
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
	m, err := merchantOfFlag(ctx, l, *shopNo)
	if err != nil {
		return err
	}
	rep, err := reconcile.Bank(ctx, reconcile.JournalDeposits{DB: s.DB}, reconcile.NewRecords(s.DB.DB), reconcile.BankInput{
		File: f, Name: filepath.Base(*file), Merchant: m.ID, ShopNo: m.ShopNo, Period: period, Actor: cliActor(*by)})
	if err != nil {
		return reconcileFailed(e, *asJSON, *file, err)
	}
	return printReconciliation(e, *asJSON, rep, rep.Verdict, "the bank statement does not reconcile")
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
func printReconciliation(e *env, asJSON bool, rep interface{ WriteText(io.Writer) error }, v reconcile.Verdict, failed string) error {
	var err error
	if asJSON {
		err = printJSON(e, rep)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	if v.Status != reconcile.ExitMatched {
		return &exitError{code: v.Status, msg: failed}
	}
	return nil
}
