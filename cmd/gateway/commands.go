package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

func cmdMigrate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "migrate", "Apply the migrations of sql/ that the database lacks.")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	s, err := openStore(ctx, e, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintln(e.stdout, "migrations applied")
	return nil
}

func cmdMerchantCreate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "merchant create", "Create a merchant. Prints shopNo, publicKey, privateKey and webhookSecret once: store them.")
	name := fs.String("name", "", "display name (required)")
	currencies := fs.String("currencies", "", "comma-separated ISO 4217 codes, e.g. USD,EUR (required)")
	whitelist := fs.String("ip-whitelist", "", "comma-separated addresses or CIDR prefixes allowed to call /shop (default: any)")
	callback := fs.String("callback-url", "", "default URL for remittance-status callbacks (docs/callbacks.md: public http or https)")
	test := testMerchantFlag(fs)
	cell := fs.String("cell", "", "with GATEWAY_CELLS: the cell to create it in (default: the cell with the fewest merchants)")
	var cfg *config.Config
	e.chooser = func(ctx context.Context, c *config.Config) (string, error) {
		cfg = c
		return placeNewMerchant(ctx, e, c, *cell)
	}
	return withLedger(ctx, e, fs, args, func(l *app.Services) error {
		if *cell != "" && cfg == nil {
			return usageError("--cell: GATEWAY_CELLS is not set")
		}
		if err := checkCallbackURL(e, "callback_url", *callback); err != nil {
			return err
		}
		m, creds, err := l.CreateMerchant(ctx, merchant.Spec{
			Name: *name, Currencies: splitList(*currencies), IPWhitelist: splitList(*whitelist), CallbackURL: *callback,
			Test: *test,
		})
		if err != nil {
			return err
		}
		if cfg != nil {
			if err := cellEnv(e, cfg).PlaceCreated(ctx, e.cell, creds.ShopNo, m.ID); err != nil {
				return err
			}
		}
		return printJSON(e, map[string]any{
			"shopNo": creds.ShopNo, "publicKey": creds.PublicKey, "privateKey": creds.PrivateKey,
			"name": m.Name, "currencies": m.Currencies, "ipWhitelist": m.IPWhitelist, "status": m.Status,
			"test": m.Test, "webhookSecret": firstWebhookSecret(ctx, e, l, m.ID),
		})
	})
}

func cmdMerchantDeposit(ctx context.Context, e *env, args []string) error {
	var currency, amount, bankRef, key *string
	return withMerchant(ctx, e, "merchant deposit", "Credit a merchant's funding account from its bank, as a DEPOSIT entry\n"+
		"carrying the bank's reference of the transfer (docs/finance.md).", args,
		func(fs *flag.FlagSet) {
			currency = fs.String("currency", "", "ISO 4217 code, one of the merchant's (required)")
			amount = fs.String("amount", "", "decimal amount, e.g. 1000.00 (required)")
			bankRef = fs.String("bank-reference", "", "the bank's reference of the transfer, unique per merchant and currency (required)")
			key = fs.String("idempotency-key", "", "makes the command safe to repeat: the same key deposits once")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			cur, err := postings.LookupCurrency(strings.ToUpper(*currency))
			if err != nil {
				return err
			}
			minor, err := postings.ParseAmount(*amount, cur)
			if err != nil {
				return err
			}
			if err := deposit.CheckBankReference(*bankRef); err != nil {
				return usageError("--bank-reference: " + postings.AsError(err).Message)
			}
			var idem *ledger.Idempotency
			if *key != "" {
				idem = &ledger.Idempotency{Key: *key}
			}
			rec, err := deposit.New(l.Ledger).Deposit(ctx, m.ID, cur.Code, minor, *bankRef, idem)
			if err != nil {
				return err
			}
			bal, err := l.Balance(ctx, postings.MerchantAccount(m.ID, postings.AccountFunding, cur.Code))
			if err != nil {
				return err
			}
			return printJSON(e, map[string]any{
				"shopNo": m.ShopNo, "kind": rec.Kind, "seq": rec.Seq, "bankReference": rec.BankReference,
				"amount": postings.Money{Minor: minor, Currency: cur}, "currency": cur.Code,
				"balance": postings.Money{Minor: bal, Currency: cur}, "ts": rec.CreatedAt.Format(time.RFC3339),
			})
		})
}

func cmdAuditVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit verify", "Check the journal's invariants. Exit status 1 and a report naming each break if any fails.")
	shopNo := fs.String("shop-no", "", "check one merchant only")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpFile := fs.String("checkpoint", "", "a checkpoint file: the journal must extend it (docs/audit.md#checkpoints)")
	pubFile := fs.String("public-key", "", "the checkpoint key's public half (default: that of $"+checkpointKeyVar+"); alone, it checks the period closes' signatures")
	cellsList := fs.String("cells", "", "verify over these cells, name=postgres://…,… as GATEWAY_CELLS (default: $GATEWAY_CELLS; docs/scaling.md)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if done, err := auditVerifyOverCells(ctx, e, *cellsList, *shopNo, *asJSON, *cpFile, *pubFile); done {
		return err
	}
	cp, pub, err := verifyCheckpoint(e, *cpFile, *pubFile)
	if err != nil {
		return err
	}
	s, l, err := openLedger(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	defer l.Close()
	closeReads, err := attachReadRoute(e, l.Ledger, database.DBOptions{ConnsMax: 8}, readWaitOperatorMs*time.Millisecond)
	if err != nil {
		return err
	}
	defer closeReads()
	var merchant int64
	if *shopNo != "" {
		m, err := merchantOfFlag(ctx, l, *shopNo)
		if err != nil {
			return err
		}
		merchant = m.ID
	}
	ok, err := reconcile.Audit(ctx, audit.New(l.Ledger), reconcile.AuditOptions{
		Merchant: merchant, JSON: *asJSON, Out: e.stdout, Progress: e.stderr, Checkpoint: cp, PublicKey: pub,
	})
	if err != nil {
		return err
	}
	if !ok {
		return &exitError{code: 1, msg: "the journal does not verify"}
	}
	return nil
}

func cmdDBURL(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "db url", "Print the database URL (for psql and auditors). Starts the embedded cluster if needed and leaves it running.")
	cell := fs.String("cell", "", "with GATEWAY_CELLS: the cell whose URL to print (required then)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	e.cell = *cell
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if len(cfg.Cells) > 0 {
		// Never the embedded cluster while cells are configured.
		return usageError("--cell: GATEWAY_CELLS is set: name one of its cells")
	}
	if cfg.DatabaseURL != "" {
		fmt.Fprintln(e.stdout, cfg.DatabaseURL)
		return nil
	}
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: app.EmbeddedDir(cfg), Durable: true, Log: e.stderr})
	if err != nil {
		return err
	}
	// The database is made as `serve` makes it: owned by the migrating
	// role, not the superuser (docs/security.md). The URL printed is the
	// superuser's over the socket, for psql on this machine.
	if err := c.EnsureRoles(ctx); err != nil {
		return err
	}
	if err := c.CreateOwnedDatabase(ctx, app.EmbeddedDBName); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, c.URL(app.EmbeddedDBName))
	return nil
}

// cmdDevDB runs a command with DATABASE_URL set to a fresh, non-durable
// cluster in a temporary directory, and removes the cluster afterwards. The
// command's exit status becomes ours.
func cmdDevDB(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprintln(e.stdout, "usage: gateway devdb -- COMMAND [ARGS...]")
		return nil
	}
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: gateway devdb -- COMMAND [ARGS...]")
		return usageError("devdb needs a command")
	}
	dir, err := os.MkdirTemp("", "gateway-devdb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(e.stderr, "devdb: starting a throwaway PostgreSQL in %s\n", dir)
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Log: e.stderr})
	if err != nil {
		return err
	}
	defer c.Stop() //nolint:errcheck
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	// A throwaway cluster's superuser: the tests make and drop databases
	// with it, and a gateway they start may serve as it (serve refuses a
	// superuser otherwise, docs/security.md).
	cmd.Env = append(os.Environ(), "DATABASE_URL="+c.URL("postgres"), "DATABASE_ALLOW_SUPERUSER=1")
	if err := cmd.Start(); err != nil {
		return err
	}
	// The child shares our terminal and gets the Ctrl-C itself; we only
	// wait for it and then clean up.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	defer signal.Reset(os.Interrupt, syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return &exitError{code: ee.ExitCode(), msg: fmt.Sprintf("%s exited with status %d", args[0], ee.ExitCode())}
		}
		return err
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func printJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false) // URLs with & stay readable
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// cliError turns a domain error into a message for a person, naming the
// flag when the error names a field.
func cliError(err error) error {
	pe := postings.AsError(err)
	if pe.Code == postings.EINTERNAL {
		return err
	}
	if pe.Field != "" {
		return &exitError{code: 2, msg: fmt.Sprintf("--%s: %s", strings.ReplaceAll(pe.Field, "_", "-"), pe.Message)}
	}
	return &exitError{code: 1, msg: pe.Message}
}
