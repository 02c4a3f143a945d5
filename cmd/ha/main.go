// Command ha runs the gateway on a pg_auto_failover formation on this one
// machine, for development and the failover tests (docs/ha.md), and gives
// the operator's backup commands for it (docs/operations.md):
//
//	ha run      [-dir var/ha] [-nodes 3|2] [-ports 25430,25431,25432[,25433]] [-gateway bin/gateway] [-from-restore DIR] [-- serve flags]
//	ha state    [-dir var/ha]
//	ha failover [-dir var/ha]
//	ha backup   [-dir var/ha] [-type full|diff|incr]
//	ha info     [-dir var/ha]
//	ha restore  [-dir var/ha] -target '2026-11-25 10:00:00+00' [-into DIR] [-gateway bin/gateway]
//
// `make run-ha`, `make backup-ha` and `make restore-ha` call it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exitUsage is the status of a usage error, as the gateway's own commands.
const exitUsage = 2

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ha:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(exitUsage)
		}
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

const usage = `usage: ha <command> [flags]

  run       start the formation (a monitor and three PostgreSQL nodes) and the
            gateway on it; Ctrl-C stops everything. -from-restore DIR makes a
            new formation in -dir from a verified restore
  state     the monitor's view of the nodes
  failover  a controlled failover (pg_autoctl perform failover)
  backup    a pgBackRest backup of the primary
  info      the backups and the archived WAL (pgbackrest info)
  restore   restore the backups and WAL to a moment into a new cluster and
            check it with gateway audit verify

ha <command> -help lists the command's flags.`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		if len(args) == 0 {
			return usageError{"no command"}
		}
		return nil
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet("ha "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "var/ha", "the formation's directory")
	switch cmd {
	case "run":
		return runFormation(ctx, fs, dir, rest, stdout)
	case "state":
		return withFormation(fs, dir, rest, func(f *formationHandle) error { return f.state(ctx, stdout) })
	case "failover":
		return withFormation(fs, dir, rest, func(f *formationHandle) error { return f.failover(ctx, stdout) })
	case "backup":
		kind := fs.String("type", "full", "full, diff or incr")
		return withFormation(fs, dir, rest, func(f *formationHandle) error { return f.backup(ctx, *kind, stdout) })
	case "info":
		return withFormation(fs, dir, rest, func(f *formationHandle) error { return f.info(ctx, stdout) })
	case "restore":
		return restore(ctx, fs, dir, rest, stdout, stderr)
	}
	fmt.Fprintln(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}
