package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paygate/gateway/internal/pgha"
	"github.com/paygate/gateway/ledger/pgcluster"
)

// gatewayStopMax is how long the gateway has to stop after Ctrl-C before
// it is told again (SIGTERM), then killed: its own drain takes at most 15 s.
const gatewayStopMax = 30 * time.Second

// runFormation is `ha run`: the formation, then the gateway on its
// multi-host URL, until Ctrl-C or the gateway's exit.
func runFormation(ctx context.Context, fs *flag.FlagSet, dir *string, args []string, stdout io.Writer) error {
	portsFlag := fs.String("ports", "25430,25431,25432", "the monitor's, node1's and node2's ports (1024-65535, best below 32768; used when the formation is created); with -nodes 3 a fourth, default node2's + 1")
	// Three by default (issue 31, point 3): losing one node still leaves
	// two copies of every acknowledged write; two stay available.
	nodes := fs.Int("nodes", 3, "data nodes, 3 or 2 (3: number_sync_standbys 1, a lost node leaves two copies of each write; used when the formation is created)")
	gatewayBin := fs.String("gateway", "bin/gateway", "the gateway binary")
	fromRestore := fs.String("from-restore", "", "a new formation in -dir (which must not hold one) from the verified `ha restore` in this directory: its first node a copy of the restored cluster, the others cloned from it, a new backup repository, the restore's data key")
	backupEvery := fs.Duration("backup-every", 24*time.Hour, "a scheduled pgBackRest backup this often: a full one every 7, a differential between (schedule.go); 0: none")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	serveArgs := fs.Args() // after --
	ports, err := formationPorts(*portsFlag, *nodes)
	if err != nil {
		return usageError{err.Error()}
	}
	for _, p := range ports {
		if p >= ephemeralMin {
			fmt.Fprintf(stdout, "ha: port %d is in the ephemeral range (%d-60999): a server restarted on it can find it held by a client socket in TIME-WAIT (docs/ha.md)\n", p, ephemeralMin)
		}
	}
	var seed *verifiedRestore
	if *fromRestore != "" {
		// Both refusals before anything is made (fromrestore.go).
		if err := refuseExistingFormation(*dir); err != nil {
			return err
		}
		if seed, err = openRestore(*fromRestore); err != nil {
			return err
		}
	}
	gwDir := os.Getenv("GATEWAY_DATA_DIR")
	if gwDir == "" {
		gwDir = filepath.Join(*dir, "gateway")
	}
	if seed != nil {
		// The restored database's key, before anything is made: a
		// different one in the gateway's directory is refused.
		if err := seed.carryKey(gwDir); err != nil {
			return err
		}
	}
	// A formation -from-restore begins in a new -dir and does not finish
	// (verified, serving) is removed again: the retry would otherwise be
	// refused as "already holds a formation" (fromrestore.go).
	fresh := seed != nil && absentOrEmpty(*dir)
	verified := false
	real, err := pgcluster.PrepareDir(*dir, stdout)
	if fresh {
		// Registered before the formation's Stop, so it runs after it.
		defer func() {
			if !verified {
				undoHalfMade(stdout, *dir, real)
			}
		}()
	}
	if err != nil {
		return err
	}
	repo, err := pgha.NewRepo(filepath.Join(real, "backup"), nil)
	if err != nil {
		return err
	}
	started := time.Now()
	fmt.Fprintf(stdout, "ha: starting the pg_auto_failover formation in %s (the first time takes about a minute)\n", *dir)
	opts := pgha.FormationOptions{Dir: *dir, Ports: ports, Repo: repo, Log: stdout}
	if seed != nil {
		opts.Seed = seed.pgData
		fmt.Fprintf(stdout, "ha: the first node is a copy of the restore %s (to %s, verified %s)\n",
			seed.dir, seed.record.Target.Format(time.RFC3339Nano), seed.record.Verified.Format(time.RFC3339))
	}
	f, err := pgha.StartFormation(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stdout, "ha: stopping the formation")
		f.Stop()
		fmt.Fprintln(stdout, "ha: stopped")
	}()
	st, err := f.State(ctx)
	if err != nil {
		return err
	}
	url := f.URL("gateway")
	fmt.Fprintf(stdout, "ha: formation up in %s\n", time.Since(started).Round(100*time.Millisecond))
	fmt.Fprintf(stdout, "ha:   monitor  127.0.0.1:%d  %s  (log %s)\n", f.Monitor.Port, f.Monitor.PGData, f.Monitor.LogPath())
	for _, n := range f.Nodes {
		s := "?"
		for _, ns := range st {
			if ns.Name == n.Name {
				s = ns.Reported
			}
		}
		fmt.Fprintf(stdout, "ha:   %-8s 127.0.0.1:%d  %s  %s  (log %s)\n", n.Name, n.Port, s, n.PGData, n.LogPath())
	}
	fmt.Fprintf(stdout, "ha:   backups  pgBackRest stanza %q, %s, %s; every %s (-backup-every), make backup-ha by hand\n",
		pgha.Stanza, repo.Config(), encryption(repo), *backupEvery)
	fmt.Fprintf(stdout, "ha:   DATABASE_URL=%s\n", url)

	// Least privilege: migrated as the owner, served as gateway_app.
	appURL, err := serveURL(ctx, f, *gatewayBin, secretsDir(real), stdout)
	if err != nil {
		return err
	}
	if seed != nil {
		// The new primary holds the restored journal, checked as the
		// restore was, with its key, before anything is served from it.
		if err := auditVerify(ctx, *gatewayBin, f.URL("gateway"), gwDir, seed.keyFile, stdout, os.Stderr); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "ha: gateway audit verify passed on the new primary, with the restore's data key")
		verified = true
	}
	cmd := exec.Command(*gatewayBin, append([]string{"serve"}, serveArgs...)...) //nolint:gosec // the operator's binary and flags
	cmd.Env = gatewayEnv(os.Environ(), appURL, gwDir, filepath.Join(real, "backup"))
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	fmt.Fprintf(stdout, "ha: starting %s serve %s (data directory %s)\n", *gatewayBin, strings.Join(serveArgs, " "), gwDir)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the gateway: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The keepers are supervised until the end; the formation stops (the
	// deferred Stop) only after the supervisor has returned.
	sctx, stopSupervising := context.WithCancel(ctx)
	supervised := make(chan error, 1)
	go func() { supervised <- f.Supervise(sctx, stdout) }()
	defer func() { stopSupervising(); waitOut(supervised) }()
	if *backupEvery > 0 {
		// Stopped (and waited for) before the formation: a backup never
		// outlives its servers.
		bctx, stopBackups := context.WithCancel(ctx)
		scheduled := make(chan error, 1)
		go func() { scheduleBackups(bctx, repo, *backupEvery, stdout); scheduled <- nil }()
		defer func() { stopBackups(); waitOut(scheduled) }()
	}
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("the gateway exited: %w", err)
		}
		return nil
	case err := <-supervised:
		supervised <- nil // for the deferred wait
		if err != nil {
			stopGateway(cmd, exited, false)
			return err
		}
	case <-ctx.Done():
	}
	stopGateway(cmd, exited, true)
	return nil
}

// stopGateway stops the gateway this process started: a Ctrl-C in the
// terminal reached it too (same process group) and it is given 3 s to
// act on it (sigint); a SIGTERM to this process alone did not. Its exit
// status after a signal says nothing more than that.
func stopGateway(cmd *exec.Cmd, exited <-chan error, sigint bool) {
	if sigint {
		select {
		case err := <-exited:
			_ = err // after a signal its status says nothing more
			return
		case <-time.After(3 * time.Second):
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		_ = err
	case <-time.After(gatewayStopMax):
		_ = cmd.Process.Kill()
		waitOut(exited)
	}
}

// gatewayEnv is the environment of ha run's gateway: env with its database
// URL and data directory, and the backup repository (unless env names one)
// whose newest backup's age the gateway's internal /metrics shows
// (gateway_backup_age_seconds, internal/opsmetrics): what pages when the
// schedule stops working.
func gatewayEnv(env []string, appURL, gwDir, backupRepo string) []string {
	out := append(env[:len(env):len(env)], "DATABASE_URL="+appURL, "GATEWAY_DATA_DIR="+gwDir)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GATEWAY_BACKUP_REPO=") && kv != "GATEWAY_BACKUP_REPO=" {
			return out
		}
	}
	return append(out, "GATEWAY_BACKUP_REPO="+backupRepo)
}

// encryption says how the repository is encrypted, and where the
// passphrase to keep is.
func encryption(repo *pgha.Repo) string {
	if repo.CipherFile() == "" {
		return "not encrypted (made before encryption: docs/operations.md)"
	}
	return "encrypted, passphrase " + repo.CipherFile() + " (keep a copy with the data key's)"
}

// ephemeralMin is the start of Linux's default ephemeral port range.
const ephemeralMin = 32768

func parsePorts(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 && len(parts) != 4 {
		return nil, fmt.Errorf("want three ports, monitor,node1,node2 (four with node3): %q", s)
	}
	ports := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1024 || n > 65535 {
			return nil, fmt.Errorf("%q is not a port from 1024 to 65535", p)
		}
		ports = append(ports, n)
	}
	return ports, nil
}

// formationHandle is an existing formation (another process runs it) and
// its backup repository.
type formationHandle struct {
	f    *pgha.Formation
	repo *pgha.Repo
}

func withFormation(fs *flag.FlagSet, dir *string, args []string, do func(*formationHandle) error) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	f, err := pgha.OpenFormation(*dir)
	if err != nil {
		return err
	}
	repo, err := pgha.OpenRepo(filepath.Join(f.Dir(), "backup"))
	if err != nil {
		return err
	}
	return do(&formationHandle{f: f, repo: repo})
}

func (h *formationHandle) state(ctx context.Context, stdout io.Writer) error {
	st, err := h.f.State(ctx)
	if err != nil {
		return fmt.Errorf("reading the monitor (is make run-ha running?): %w", err)
	}
	fmt.Fprint(stdout, st)
	fmt.Fprintf(stdout, "DATABASE_URL=%s\n", h.f.URL("gateway"))
	return nil
}

func (h *formationHandle) failover(ctx context.Context, stdout io.Writer) error {
	start := time.Now()
	if err := h.f.Failover(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "failover done in %s\n", time.Since(start).Round(time.Millisecond))
	return h.state(ctx, stdout)
}

func (h *formationHandle) backup(ctx context.Context, kind string, stdout io.Writer) error {
	start := time.Now()
	if err := h.repo.Backup(ctx, kind); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s backup done in %s\n", kind, time.Since(start).Round(time.Millisecond))
	return h.info(ctx, stdout)
}

func (h *formationHandle) info(ctx context.Context, stdout io.Writer) error {
	out, err := h.repo.Info(ctx)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, out)
	return nil
}

// waitOut waits for a goroutine's last word when its error was already
// dealt with (returned, or moot after a signal).
func waitOut(done <-chan error) {
	err := <-done
	_ = err
}
