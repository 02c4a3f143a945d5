package main

import (
	"context"
	"os"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/reconcile"
)

// `gateway reconcile refunds`: the card network's refund file against the
// CARD_REFUND entries of its period, matched by the network's message id
// (docs/finance.md, "Refund reconciliation").
func cmdReconcileRefunds(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reconcile refunds --file REFUNDS.csv", "Match the card network's refund file (CSV: message_id,card_no,amount,currency,date,\n"+
		"after a first line '# period: YYYY-MM-DD[/YYYY-MM-DD]') against every CARD_REFUND entry of its period, by the\n"+
		"network's message id, and record a file that matches. Exit status 0 when everything matched, 1 on\n"+
		"discrepancies, 2 when the input cannot be reconciled (docs/finance.md).")
	rf := newReconcileFlags(fs, "the network's refund file")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	return rf.run(ctx, e, func(s *app.Store, l *app.Services, f *os.File, a reconcileArgs) (reconcileReport, error) {
		return reportOf(reconcile.Refunds(ctx, l.Refunds(), reconcile.NewRecords(s.DB.DB), reconcile.RefundInput{
			File: f, Name: a.Name, Period: a.Period, Actor: a.Actor}))
	})
}
