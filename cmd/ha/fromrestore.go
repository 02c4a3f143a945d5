package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// `ha run -from-restore DIR` (docs/ha.md, "From a restore back to an HA
// formation"): a new formation whose first node is a copy of the cluster a
// verified `ha restore` made in DIR, its standbys cloned from it, its own
// monitor, certificates, passwords and backup repository, and the
// restored database's data key carried into its gateway's directory.

// restoreMarker is the file `ha restore` writes into its directory last,
// once `gateway audit verify` passed: a directory without it is not a
// finished, verified restore (one still running, one that failed before
// its cleanup, or any other directory).
const restoreMarker = "restore.json"

// restoreRecord is restoreMarker's content: what was restored, for the
// operator and for -from-restore's messages.
type restoreRecord struct {
	Target    time.Time `json:"target"`
	Set       string    `json:"set,omitempty"`
	Formation string    `json:"formation"`
	Verified  time.Time `json:"verified"`
}

// writeRestoreRecord marks into as a finished, verified restore.
func writeRestoreRecord(into string, r restoreRecord) error {
	b, _ := json.MarshalIndent(r, "", "  ")
	return os.WriteFile(filepath.Join(into, restoreMarker), append(b, '\n'), 0o644) //nolint:gosec // no secret
}

// verifiedRestore is a finished, verified restore's directory.
type verifiedRestore struct {
	dir     string
	record  restoreRecord
	pgData  string // the restored cluster's data directory
	keyFile string // the restored database's data key (dir/data.key)
	key     []byte
}

// openRestore checks that dir is a finished, verified restore whose
// server is stopped, before anything of a new formation is made.
func openRestore(dir string) (*verifiedRestore, error) {
	b, err := os.ReadFile(filepath.Join(dir, restoreMarker)) //nolint:gosec // the operator's restore
	if err != nil {
		return nil, fmt.Errorf("-from-restore: %s is not a finished, verified restore (no %s, which `ha restore` writes once gateway audit verify passed): %w",
			dir, restoreMarker, err)
	}
	r := &verifiedRestore{dir: dir, keyFile: filepath.Join(dir, "data.key")}
	if err := json.Unmarshal(b, &r.record); err != nil {
		return nil, fmt.Errorf("-from-restore: %s: %w", filepath.Join(dir, restoreMarker), err)
	}
	if r.key, err = readKeyFile(r.keyFile); err != nil {
		return nil, fmt.Errorf("-from-restore: %w", err)
	}
	pg := filepath.Join(dir, "pg")
	if target, err := os.Readlink(filepath.Join(pg, "cluster")); err == nil {
		pg = target // pgcluster.PrepareDir's stand-in, when postgres cannot reach dir
	}
	r.pgData = filepath.Join(pg, "data")
	if _, err := os.Stat(filepath.Join(r.pgData, "PG_VERSION")); err != nil {
		return nil, fmt.Errorf("-from-restore: %s holds no restored cluster: %w", r.pgData, err)
	}
	if _, err := os.Stat(filepath.Join(r.pgData, "postmaster.pid")); err == nil {
		return nil, fmt.Errorf("-from-restore: a server runs on %s (a gateway serving the restore?): stop it first; the copy must be of a stopped cluster", r.pgData)
	}
	return r, nil
}

// refuseExistingFormation refuses a -dir that holds a formation already:
// the restore's data would not replace its nodes', and its backups must
// not be mixed with the new formation's.
func refuseExistingFormation(dir string) error {
	if _, err := pgha.OpenFormation(dir); err == nil {
		return usageError{fmt.Sprintf("-dir %s already holds a formation: a formation from a restore is made in a new directory "+
			"(one made from a restore before runs again with ha run -dir %s, without -from-restore)", dir, dir)}
	}
	return nil
}

// carryKey puts the restored database's data key into the new formation's
// gateway directory; a different key there is refused, never replaced.
func (r *verifiedRestore) carryKey(gwDir string) error {
	if err := os.MkdirAll(gwDir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(gwDir, "data.key")
	if old, err := readKeyFile(path); err == nil {
		if subtle.ConstantTimeCompare(old, r.key) != 1 { // a secret: compared in constant time
			return fmt.Errorf("%s holds another data key than the restore's %s: use a new gateway directory (GATEWAY_DATA_DIR)", path, r.keyFile)
		}
		return nil
	} else if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(path, r.key, 0o600)
}

// absentOrEmpty reports whether dir does not exist or holds nothing: the
// only -dir that a failed -from-restore may remove again.
func absentOrEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	return errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0)
}

// undoHalfMade removes what a -from-restore that failed before its new
// primary was verified made in a new -dir (and the cluster directory it
// links to, when the servers' user could not reach -dir): nothing of it is
// served or backed up yet, the restore itself is untouched, and the same
// command may be run again. Called after the formation's servers stopped.
func undoHalfMade(stdout io.Writer, dir, real string) {
	for _, d := range []string{real, dir} {
		if d == "" {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			fmt.Fprintf(stdout, "ha: could not remove the unfinished formation in %s: %v; remove it before running again\n", d, err)
			continue
		}
	}
	fmt.Fprintf(stdout, "ha: the formation from the restore did not finish; %s was removed, the restore is untouched: run the same command again\n", dir)
}
