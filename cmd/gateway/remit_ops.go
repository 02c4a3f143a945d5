package main

import (
	"context"
	"os"
	"strings"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/remittance"
)

// cmdSanctionsLoad replaces the sanctions list that remittance screening
// reads. The file is parsed with the same rules as screening uses, and one
// malformed line refuses the whole file: a silently shortened list would
// screen less than the operator believes.
func cmdSanctionsLoad(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sanctions load", "Replace the sanctions list (CSV: name,country[,list,id] with a header line).")
	file := fs.String("file", "", "the CSV file (required)")
	// Every cell's list (cells_operator.go): the file is read again for each.
	return withEveryCell(ctx, e, fs, args, func(l *app.Services) (any, error) {
		f, err := os.Open(*file)
		if err != nil {
			return nil, usageError(err.Error())
		}
		defer f.Close()
		// Read as a stream and inserted as read, one transaction: memory
		// holds a batch, not the list (docs/remittances.md).
		version, n, err := l.Remit.LoadSanctions(ctx, f)
		if err != nil {
			return nil, err
		}
		return map[string]any{"entries": n, "version": version}, nil
	})
}

// cmdRail reports a rail outcome for an in-flight remittance, as a rail
// partner would on the internal listener.
func cmdRail(status string) func(ctx context.Context, e *env, args []string) error {
	verb := map[string]string{remittance.RemitSettled: "settle", remittance.RemitReturned: "return"}[status]
	return func(ctx context.Context, e *env, args []string) error {
		fs := newFlags(e, "rail "+verb, "Report that an in-flight remittance "+strings.ToLower(status)+" (as the rail partner).")
		txID := fs.String("tx-id", "", "the remittance (required)")
		reason := new(string)
		if status == remittance.RemitReturned {
			// Only a return carries a reason: settle has no such flag.
			reason = fs.String("reason", "AC01", "ISO 20022 return reason")
		}
		msg := fs.String("message-id", "", "the report's message id, for idempotency (default: derived from tx id and status)")
		return withLedger(ctx, e, fs, args, func(l *app.Services) error {
			if *msg == "" {
				*msg = "cli-" + verb + "-" + *txID
			}
			if status == remittance.RemitReturned && *reason == "" {
				*reason = "AC01"
			}
			r, err := l.Remit.ReportRemittance(ctx, *msg, *txID, status, strings.ToUpper(*reason))
			if err != nil {
				return err
			}
			return printJSON(e, map[string]any{"txId": r.TxID, "status": r.Status, "reason": r.Reason, "settledAt": r.SettledAt})
		})
	}
}
