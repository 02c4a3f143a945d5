package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// The steps of `ha restore` around pgBackRest's: the data key it needs,
// the WAL switch before it, the directory it may remove again, and the
// check after it.

// readKeyFile reads a data key file (64 hex digits), refusing anything
// else before any work is done.
func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the operator's key file
	if err != nil {
		return nil, fmt.Errorf("-key: %w: the restore needs the data key of the database restored, kept beside the backups (docs/operations.md, \"The data key\")", err)
	}
	s := strings.TrimSpace(string(b))
	if k, err := hex.DecodeString(s); err != nil || len(k) != 32 {
		return nil, fmt.Errorf("-key: %s is not a data key (64 hex digits)", path)
	}
	return []byte(s + "\n"), nil
}

// switchWAL makes the formation's primary close its current WAL segment
// and waits until it is archived, so that the archive holds a record after
// any moment up to now: without it a target within archive_timeout (60 s)
// of the last archived segment ended with "recovery ended before
// configured recovery target was reached" (issue 31, finding 3). A
// formation that does not answer (every node lost: the reason to restore)
// is noted and skipped; the archive then ends where it ends.
func switchWAL(ctx context.Context, f *pgha.Formation, target time.Time, stdout io.Writer) error {
	sctx, cancel := context.WithTimeout(ctx, restoreSwitchMax)
	defer cancel()
	now, err := pgha.SwitchAndArchiveAt(sctx, f.URL("postgres"))
	var down *pgha.UnreachableError
	switch {
	case errors.As(err, &down):
		fmt.Fprintf(stdout, "ha: the formation does not answer (%v): restoring from the archive as it is\n", down)
		return nil
	case err != nil:
		return fmt.Errorf("forcing a WAL switch before the restore: %w", err)
	}
	if target.After(now) {
		return usageError{fmt.Sprintf("-target %s is after the database's present (%s): nothing is archived beyond it",
			target.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))}
	}
	fmt.Fprintln(stdout, "ha: WAL switched and archived up to now")
	return nil
}

// claimInto makes the restore's directory when it does not exist and
// returns what removes it again: the whole directory when this restore
// made it, else only the files a restore puts there.
func claimInto(into string) (func(), error) {
	if _, err := os.Stat(into); errors.Is(err, os.ErrNotExist) {
		// 0755 as pgcluster.PrepareDir makes it: the postgres user must
		// traverse it to reach the cluster in it.
		if err := os.MkdirAll(into, 0o755); err != nil { //nolint:gosec // no secret in the directory itself; data.key is 0600
			return nil, err
		}
		return func() { _ = os.RemoveAll(into) }, nil
	}
	return func() {
		for _, n := range []string{"pg", "data.key", restoreMarker} {
			_ = os.RemoveAll(into + "/" + n)
		}
	}, nil
}

// cleanupAlso removes dir too (the cluster's stand-in outside the
// directory, when the postgres user cannot reach it: pgcluster.PrepareDir).
func cleanupAlso(cleanup func(), dir string) func() {
	return func() {
		_ = os.RemoveAll(dir)
		cleanup()
	}
}

// auditVerify runs `gateway audit verify` on the restored database with
// the key given: a key that is not the database's is refused there (exit
// 2, naming both fingerprints), and the restore fails with it.
func auditVerify(ctx context.Context, gatewayBin, url, into, keyFile string, stdout, stderr io.Writer) error {
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		// The key is -key's (copied into the directory), never one the
		// operator's shell happens to hold.
		if !strings.HasPrefix(kv, "GATEWAY_DATA_KEY=") && !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "GATEWAY_DATA_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "DATABASE_URL="+url, "DATABASE_ALLOW_SUPERUSER=1", "GATEWAY_DATA_DIR="+into)
	verify := exec.CommandContext(ctx, gatewayBin, "audit", "verify") //nolint:gosec // the operator's binary
	verify.Env, verify.Stdout, verify.Stderr = env, stdout, stderr
	err := verify.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 2 {
		return fmt.Errorf("the data key %s is not the restored database's (gateway audit verify refused it: above)", keyFile)
	}
	if err != nil {
		return fmt.Errorf("gateway audit verify of the restored database: %w", err)
	}
	return nil
}
