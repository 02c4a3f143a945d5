package main

import (
	"context"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/postings"
)

// cmdAuditClose closes a merchant's day or month: its closing balances and
// head, signed with the checkpoint key and stored (docs/audit.md#period-close).
func cmdAuditClose(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit close", "Close a merchant's UTC day or month once it has ended: record and sign its closing balances\n"+
		"and journal head (docs/audit.md#period-close).")
	shopNo := fs.String("shop-no", "", "the merchant (required)")
	month := fs.String("period", "", "a month, 2026-11")
	day := fs.String("day", "", "a day, 2026-11-26")
	keyFile := fs.String("key-file", "", "the private key file (default: $"+checkpointKeyVar+")")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *shopNo == "" {
		return usageError("--shop-no is required")
	}
	kind, period := audit.PeriodMonth, *month
	switch {
	case (*month == "") == (*day == ""):
		return usageError("give one of --period (a month, 2026-11) or --day (2026-11-26)")
	case *day != "":
		kind, period = audit.PeriodDay, *day
	}
	flag := map[string]string{audit.PeriodMonth: "--period", audit.PeriodDay: "--day"}[kind]
	if _, _, err := audit.ParsePeriod(kind, period); err != nil {
		return usageError(flag + ": " + postings.AsError(err).Message)
	}
	signer, err := checkpointSigner(e, *keyFile)
	if err != nil {
		return err
	}
	l, m, done, err := openMerchant(ctx, e, *shopNo, false)
	if err != nil {
		return err
	}
	defer done()
	c, err := audit.New(l.Ledger).ClosePeriod(ctx, signer, m.ID, kind, period)
	if err != nil {
		return err
	}
	return printJSON(e, c)
}
