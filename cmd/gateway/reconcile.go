package main

// The reconciliation and audit commands beyond `audit verify`: a merchant's
// statement, the card network's settlement file, and auditors' logins
// (docs/audit.md).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// reconcileStatementTimeout bounds one statement of the reconciliation
// commands. They read a merchant's whole bill or page through a day's
// clearings in few, long statements; the gateway's default (30 s, for
// requests) would cut them short on a large journal.
const reconcileStatementTimeout = 15 * time.Minute

// passwordFileBytesMax bounds the password file `audit role` reads.
const passwordFileBytesMax = 4096

// openReconcileLedger opens the store and a ledger for reading: no data key
// (nothing sealed is read, and an auditor's machine need not hold it), one
// writer shard, long statements.
func openReconcileLedger(ctx context.Context, e *env) (*app.Store, *app.Services, error) {
	s, err := openStore(ctx, e, database.DBOptions{ConnsMax: 4, StatementTimeout: reconcileStatementTimeout})
	if err != nil {
		return nil, nil, err
	}
	return s, app.NewServices(ledger.New(s.DB, ledger.Config{Logger: e.log, Shards: 1, Domains: domains.All()}), nil, nil), nil
}

func cmdAuditStatement(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit statement", "Check a merchant's statement: per account and currency, the opening balance plus the\n"+
		"bill's movements must be the closing balance. Exit status 1 on a mismatch.")
	shopNo := fs.String("shop-no", "", "the merchant's shop number (required)")
	fromText := fs.String("from", "", "first day, YYYY-MM-DD (UTC), included (required)")
	toText := fs.String("to", "", "last day, YYYY-MM-DD (UTC), included (required)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *shopNo == "" {
		return usageError("--shop-no is required")
	}
	from, err := parseDay("from", *fromText)
	if err != nil {
		return err
	}
	to, err := parseDay("to", *toText)
	if err != nil {
		return err
	}
	if to.Before(from) {
		return usageError("--to must not be before --from")
	}
	l, m, done, err := openMerchant(ctx, e, *shopNo, true)
	if err != nil {
		return err
	}
	defer done()
	rep, err := reconcile.Statement(ctx, audit.New(l.Ledger), m.ID, from, to.AddDate(0, 0, 1))
	if err != nil {
		return cliError(err)
	}
	rep.ShopNo = m.ShopNo
	return printReconciliation(e, *asJSON, rep, fmt.Sprintf("the statement does not reconcile: %d accounts mismatch", rep.Mismatches))
}

// parseDay parses a UTC day in the range of postings.ParseDay (a year
// PostgreSQL cannot hold would print a raw SQL error), naming the flag.
func parseDay(flagName, text string) (time.Time, error) {
	if text == "" {
		return time.Time{}, usageError(fmt.Sprintf("--%s is required", flagName))
	}
	d, err := postings.ParseDay(flagName, text)
	if err != nil {
		return time.Time{}, usageError(fmt.Sprintf("--%s: %s", flagName, postings.AsError(err).Message))
	}
	return d, nil
}

func cmdReconcileSettlement(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reconcile settlement FILE.csv", "Match a card network settlement file (CSV: message_id,auth_id,amount,currency,date,\n"+
		"after a first line '# period: YYYY-MM-DD[/YYYY-MM-DD]') against every CARD_SETTLE entry of its period,\n"+
		"and record a file that matches. Exit status 0 when everything matched, 1 on discrepancies,\n"+
		"2 when the input cannot be reconciled (docs/audit.md).")
	rf := newPeriodFlags(fs, "the settlement day, YYYY-MM-DD (UTC), for a file without a period line")
	help, path, err := parseFlagsAndArg(fs, args, "FILE.csv")
	if help || err != nil {
		return err
	}
	return rf.reconcile(ctx, e, path, "the settlement file does not reconcile",
		func(s *app.Store, l *app.Services, f *os.File, a reconcileArgs) (reconcileReport, error) {
			return reportOf(reconcile.Settlement(ctx, l.Settlements(), reconcile.NewRecords(s.DB.DB), reconcile.SettlementInput{
				File: f, Name: a.Name, Period: a.Period, Actor: a.Actor}))
		})
}

// settlementPeriodFlags is the period of --day or --from and --to; zero
// when none is given (the file must state it).
func settlementPeriodFlags(day, from, to string) (reconcile.Period, error) {
	var err error
	var p reconcile.Period
	switch {
	case day != "" && (from != "" || to != ""):
		return p, usageError("give --day, or --from and --to, not both")
	case day != "":
		p, err = reconcile.NewPeriod("day", day, "day", day)
	case from != "" || to != "":
		if from == "" || to == "" {
			return p, usageError("--from and --to go together")
		}
		p, err = reconcile.NewPeriod("from", from, "to", to)
	}
	if err != nil {
		pe := postings.AsError(err)
		return p, usageError(fmt.Sprintf("--%s: %s", pe.Field, pe.Message))
	}
	return p, nil
}

// cliActor is who reconciles from the command line, as recorded: --by, or
// the OS user.
func cliActor(by string) string {
	if by != "" {
		return by
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

// parseFlagsAndArg parses args with exactly one positional argument,
// before, between or after the flags.
func parseFlagsAndArg(fs *flag.FlagSet, args []string, name string) (help bool, arg string, err error) {
	var positional []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return true, "", nil
		} else if err != nil {
			return false, "", usageError(err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		return false, "", usageError(fmt.Sprintf("want one %s, got %d arguments", name, len(positional)))
	}
	return false, positional[0], nil
}

func cmdAuditRole(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit role", "Create a database login for an auditor: a member of "+reconcile.AuditorRole+", which may only read\n"+
		"the journal and its views (docs/audit.md). Run again to change the password.")
	login := fs.String("login", "", "the login's name: [a-z_][a-z0-9_]*, at most 63 characters (required)")
	passwordFile := fs.String("password-file", "", "a file holding the password, 12 to 1,024 printable ASCII characters\n"+
		"(a final newline is ignored) (required)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *login == "" || *passwordFile == "" {
		return usageError("--login and --password-file are required")
	}
	password, err := readPasswordFile(e, *passwordFile)
	if err != nil {
		return err
	}
	s, err := openStore(ctx, e, database.DBOptions{ConnsMax: 2})
	if err != nil {
		return err
	}
	defer s.Close()
	// Making a role is beyond the gateway's own (gateway_app): the
	// embedded cluster's superuser does it (docs/security.md, 13).
	admin, err := sql.Open("pgx", s.AdminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	created, err := reconcile.CreateAuditor(ctx, admin, *login, password)
	if err != nil {
		return cliError(err)
	}
	// Not HTML-escaped: the URL's "&" is copied into psql as it is.
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{
		"login": *login, "created": created, "memberOf": reconcile.AuditorRole,
		"url": loginURL(s.URL, *login),
	})
}

// readPasswordFile reads a password file, bounded, without its final
// newline, and warns when others may read it.
func readPasswordFile(e *env, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", &exitError{code: 2, msg: "--password-file: " + err.Error()}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(e.stderr, "warning: %s can be read by other users (mode %v); chmod 600 it\n", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, passwordFileBytesMax+1))
	if err != nil {
		return "", &exitError{code: 2, msg: "--password-file: " + err.Error()}
	}
	if len(b) > passwordFileBytesMax {
		return "", &exitError{code: 2, msg: fmt.Sprintf("--password-file: more than %d bytes", passwordFileBytesMax)}
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// loginURL is the database URL u for user login, without any password: what
// the auditor gives psql, which asks for the password.
func loginURL(u, login string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return ""
	}
	parsed.User = url.User(login)
	return parsed.String()
}
