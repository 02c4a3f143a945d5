package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/remittance"
)

// env is what every subcommand gets from the outside world. Nothing reads
// os.Getenv or os.Stdout directly, so tests run the real commands in
// parallel with their own settings.
type env struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	level  *slog.LevelVar
	// cell is the cell of GATEWAY_CELLS the command works in, once it
	// has chosen one (its --cell, its merchant's): config then gives that
	// cell's database as DATABASE_URL.
	cell string
	// chooser, when set, chooses the cell before the command opens its
	// database (chooseCell); nil: the command needs no cell of its own.
	chooser func(ctx context.Context, cfg *config.Config) (string, error)
}

// chooseCell sets e.cell with the command's chooser when GATEWAY_CELLS is
// set; without cells there is one database and nothing to choose.
func (e *env) chooseCell(ctx context.Context) error {
	if e.chooser == nil {
		return nil
	}
	cfg, err := e.config()
	if err != nil || len(cfg.Cells) == 0 {
		return err
	}
	e.cell, err = e.chooser(ctx, cfg)
	return err
}

// slogInfo is the level of the start-up lines.
const slogInfo = slog.LevelInfo

// setLogLevel applies the configuration's GATEWAY_LOG_LEVEL (run starts
// with the variable read leniently, before any command has checked it).
func (e *env) setLogLevel(l slog.Level) { e.level.Set(l) }

// config is the configuration of the environment, for the commands other
// than serve (which adds its flags): the database, the data directory and
// key, the internal API's address and token, the callback allow list. A
// malformed setting stops every command, as it stops serve.
func (e *env) config() (*config.Config, error) {
	cfg, err := config.FromEnvironment(e.getenv)
	if err != nil {
		return nil, configError(err)
	}
	for _, c := range cfg.Cells {
		if c.Name == e.cell {
			return cfg.ForCell(c), nil
		}
	}
	return cfg, nil
}

// configError is a refused setting: a usage error (exit 2) naming it.
func configError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return usageError(ce.Error())
	}
	return err
}

type subcommand struct {
	name    string // one to three words: "serve", "merchant create", "console user create"
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// subcommands is the whole command surface, in the order --help shows it.
func subcommands() []subcommand {
	return []subcommand{
		{"serve", "run the gateway: the /shop HTTPS API and its workers", cmdServe},
		{"migrate", "apply the database migrations and exit", cmdMigrate},
		{"merchant create", "create a merchant and print its credentials as JSON", cmdMerchantCreate},
		{"cells init", "make every database of GATEWAY_CELLS a cell and place its merchants in the directory", cmdCellsInit},
		{"merchant deposit", "credit a merchant's funding account from its bank (a DEPOSIT entry)", cmdMerchantDeposit},
		{"adjustment propose", "propose a correction: reverse an entry, or adjust against a house account", cmdAdjustmentPropose},
		{"adjustment approve", "approve another house user's adjustment: posts its ADJUSTMENT entry once", cmdAdjustmentDecide(true)},
		{"adjustment reject", "reject another house user's adjustment", cmdAdjustmentDecide(false)},
		{"adjustment list", "list a merchant's adjustments", cmdAdjustmentList},
		{"merchant show", "print a merchant's settings, balances and limits", cmdMerchantShow},
		{"merchant disable", "disable a merchant: its /shop requests answer 403", cmdMerchantStatus(merchant.Disabled)},
		{"merchant enable", "enable a disabled merchant", cmdMerchantStatus(merchant.Active)},
		{"merchant whitelist", "replace a merchant's IP whitelist", cmdMerchantWhitelist},
		{"merchant callback-url", "set a merchant's default callback URL", cmdMerchantCallbackURL},
		{"merchant roll-key", "replace a merchant's public or signing key, the old one valid for an overlap", cmdMerchantRollKey},
		{"merchant kyb", "set a merchant's KYB tier (resets its limits to the tier's)", cmdMerchantKYB},
		{"merchant limits", "set a merchant's limits in one currency", cmdMerchantLimits},
		{"bin list", "list the BIN catalogue", cmdBINList},
		{"bin add", "add or change a BIN entry", cmdBINAdd},
		{"bin access", "open or close a BIN entry to one merchant", cmdBINAccess},
		{"fx set", "set the rate and spread of a currency pair", cmdFXSet},
		{"fx list", "list the FX rates", cmdFXList},
		{"callbacks list", "list a merchant's events with their delivery status", cmdCallbacksList},
		{"callbacks replay", "send an event, or every failed one, again", cmdCallbacksReplay},
		{"webhook secret roll", "replace a merchant's Standard Webhooks secret (whsec_), the old one signing for an overlap", cmdWebhookSecretRoll},
		{"webhook endpoint list", "list a merchant's webhook endpoints", cmdWebhookEndpointList},
		{"webhook endpoint add", "add a webhook endpoint (URL, event types, own secret printed once)", cmdWebhookEndpointAdd},
		{"webhook endpoint set", "change a webhook endpoint's URL, event types, enabled flag or description", cmdWebhookEndpointSet},
		{"webhook endpoint delete", "delete a webhook endpoint", cmdWebhookEndpointDelete},
		{"webhook endpoint roll", "replace a webhook endpoint's secret, the old one signing for an overlap", cmdWebhookEndpointRoll},
		{"listen", "follow a merchant's events with its API credentials and forward each, signed, to a local URL", cmdListen},
		{"trigger", "make a test merchant emit one event of a type, through the API and its sandbox", cmdTrigger},
		{"sanctions load", "replace the sanctions list that remittance screening reads", cmdSanctionsLoad},
		{"rail settle", "report an in-flight remittance settled (as the rail partner)", cmdRail(remittance.RemitSettled)},
		{"rail return", "report an in-flight remittance returned (as the rail partner)", cmdRail(remittance.RemitReturned)},
		{"network authorize", "simulate the card network: send an authorization to the internal API", cmdNetworkAuthorize},
		{"network clear", "simulate the card network: capture an authorization", cmdNetworkClear},
		{"network reverse", "simulate the card network: release an authorization's hold, fully or partly", cmdNetworkReverse},
		{"network refund", "simulate the card network: refund to a card", cmdNetworkRefund},
		{"network attempts", "list a card's authorization attempts with their ISO 8583 codes", cmdNetworkAttempts},
		{"network show", "print one authorization and what became of its hold", cmdNetworkShow},
		{"audit verify", "check hash chains, sequences, balances and bill lines; exit 1 on any break", cmdAuditVerify},
		{"audit statement", "check a merchant's statement over UTC days: opening + movements = closing; exit 1 on a mismatch", cmdAuditStatement},
		{"audit checkpoint", "sign every merchant's journal head, store the checkpoint and print it for an auditor to keep", cmdAuditCheckpoint},
		{"audit close", "close a merchant's ended UTC day or month: sign and store its closing balances and head", cmdAuditClose},
		{"audit checkpoint-key", "make the Ed25519 key pair that signs checkpoints (the database never holds it)", cmdAuditCheckpointKey},
		{"audit role", "create or update an auditor's read-only database login (member of gateway_auditor)", cmdAuditRole},
		{"report balance", "a merchant's balance report over days (UTC or --time-zone): opening, activity by category, closing; text, JSON or CSV", cmdReportBalance},
		{"reconcile settlement", "match a card network settlement CSV against the CARD_SETTLE entries; exit 0 only if all match", cmdReconcileSettlement},
		{"reconcile bank", "match a bank statement CSV against a merchant's deposits by bank reference; exit 0 only if all match", cmdReconcileBank},
		{"reconcile rail", "match the rail's settlement report CSV against the REMIT_SETTLE/REMIT_RETURN entries; exit 0 only if all match", cmdReconcileRail},
		{"reconcile refunds", "match the card network's refund CSV against the CARD_REFUND entries by message id; exit 0 only if all match", cmdReconcileRefunds},
		{"console user create", "create a web console user (merchant admin/finance/readonly, operator, auditor)", cmdConsoleUserCreate},
		{"console totp", "print the current TOTP code of a secret (the demo operator's)", cmdConsoleTOTP},
		{"datakey status", "print the data key's fingerprint and, per key version, the sealed values that need it (the re-seal's progress)", cmdDataKeyStatus},
		{"datakey rotate", "add a data key version; running gateways re-seal the older values in the background", cmdDataKeyRotate},
		{"datakey reseal", "re-seal every value under the current key version now and retire the versions none needs", cmdDataKeyReseal},
		{"cells move", "move a merchant between cells' databases (copy, pause, verify, switch, remove); prints the pause", cmdCellsMove},
		{"cells declines", "print the authorizations declined 91 during merchants' moves between cells, as each cell logged them", cmdCellsDeclines},
		{"db url", "print the URL of the gateway's database (the embedded one unless DATABASE_URL is set)", cmdDBURL},
		{"devdb", "run a command with DATABASE_URL set to a throwaway local PostgreSQL (used by make test)", cmdDevDB},
	}
}

// run is the whole program with an environment of getenv alone (the
// tests' harness): no variable is listed, so none is warned of.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runEnviron(ctx, args, getenv, nil, stdout, stderr)
}

// runEnviron is the whole program: main only calls it. environ is the
// process's environment as os.Environ gives it, read only to warn of the
// GATEWAY_* variables no setting reads (warnUnknownVariables).
func runEnviron(ctx context.Context, args []string, getenv func(string) string, environ []string, stdout, stderr io.Writer) error {
	level := &slog.LevelVar{}
	level.Set(logLevel(getenv("GATEWAY_LOG_LEVEL")))
	e := &env{getenv: getenv, stdout: stdout, stderr: stderr, level: level,
		log: slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))}
	warnUnknownVariables(e.log, environ)
	rest := args[1:]
	if len(rest) == 0 || rest[0] == "-h" || rest[0] == "--help" || rest[0] == "help" {
		usage(stdout, subcommands())
		if len(rest) == 0 {
			return usageError("no command given")
		}
		return nil
	}
	if rest[0] == "version" || rest[0] == "--version" || rest[0] == "-version" {
		return cmdVersion(ctx, e, rest[1:])
	}
	for _, n := range []int{3, 2, 1} {
		if len(rest) < n {
			continue
		}
		name := strings.Join(rest[:n], " ")
		for _, c := range subcommands() {
			if c.name == name {
				return c.run(ctx, e, rest[n:])
			}
		}
	}
	// A group alone (`gateway merchant`), with --help, or with a command it
	// does not have: the group's commands.
	if group := groupOf(rest[0]); group != nil {
		switch {
		case len(rest) == 1:
			usage(stdout, group)
			return usageError(fmt.Sprintf("%s needs a command", rest[0]))
		case rest[1] == "-h" || rest[1] == "--help" || rest[1] == "help":
			usage(stdout, group)
			return nil
		}
		usage(stderr, group)
		return usageError(fmt.Sprintf("unknown command %q", strings.Join(rest[:2], " ")))
	}
	usage(stderr, subcommands())
	return usageError(fmt.Sprintf("unknown command %q", strings.Join(rest, " ")))
}

// groupOf is the commands whose first word is word ("merchant": merchant
// create, merchant deposit, …), nil when no two-word command starts so.
func groupOf(word string) []subcommand {
	var out []subcommand
	for _, c := range subcommands() {
		if first, _, two := strings.Cut(c.name, " "); two && first == word {
			out = append(out, c)
		}
	}
	return out
}

func usage(w io.Writer, cmds []subcommand) {
	whole := len(cmds) == len(subcommands())
	if whole {
		fmt.Fprintln(w, "usage: gateway <command> [flags]   (gateway <command> --help for its flags)")
	} else {
		group, _, _ := strings.Cut(cmds[0].name, " ")
		fmt.Fprintf(w, "usage: gateway %s <command> [flags]   (gateway %s <command> --help for its flags)\n", group, group)
	}
	fmt.Fprintln(w)
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	if !whole {
		return
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "version", "print the gateway's version and commit (also --version)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Settings come from flags and the environment: DATABASE_URL (default: an embedded PostgreSQL")
	fmt.Fprintln(w, "in $GATEWAY_DATA_DIR/pg), GATEWAY_DATA_DIR (./var), GATEWAY_ADDR (127.0.0.1:8443), GATEWAY_DATA_KEY")
	fmt.Fprintln(w, "(64 hex digits; default: a key generated in $GATEWAY_DATA_DIR/data.key). docs/operations.md has them all;")
	fmt.Fprintln(w, "a malformed one stops the command with a message naming it.")
}

// newFlags makes a flag set for a subcommand whose usage goes to stderr.
// The flag package's own report of a bad flag is discarded: the error comes
// back from parseFlags and main prints it once.
func newFlags(e *env, name, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet("gateway "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: gateway %s [flags]\n%s\n\nflags:\n", name, summary)
		fs.SetOutput(e.stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args; --help is not an error.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return true, nil
	}
	if err != nil {
		return false, usageError(err.Error())
	}
	if fs.NArg() > 0 {
		return false, usageError(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	return false, nil
}

// exitError carries a process exit status.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(msg string) error { return &exitError{code: 2, msg: msg} }

func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	// A data key the database refuses is a configuration error, like a
	// malformed setting (issue 31).
	var k *merchant.DataKeyError
	if errors.As(err, &k) {
		return 2
	}
	return 1
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}
