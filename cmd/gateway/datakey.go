package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/merchant"
)

// The data key's commands (docs/security.md, "The data key"): its
// fingerprint and the re-seal's progress, a new key version, and the
// re-seal in the foreground. Each opens the key as serve does, so each is
// refused (exit 2) with a key the database does not record.

// withKeyring opens the ledger (which checks the key) and runs do with its
// database and sealer. With GATEWAY_CELLS it opens every cell (each
// checked: a cell bound to another key is refused, named) and runs over
// with their keyrings instead (datakey_cells.go).
func withKeyring(ctx context.Context, e *env, name, summary string, args []string, do func(db *bun.DB, s *merchant.Sealer) error,
	over func(ks []app.Keyring) error) error {
	fs := newFlags(e, name, summary)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if len(cfg.Cells) > 0 {
		return overEveryCell(ctx, e, cfg, over)
	}
	st, l, err := openLedger(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	defer l.Close()
	return do(l.DB(), l.Sealer())
}

func cmdDataKeyStatus(ctx context.Context, e *env, args []string) error {
	return withKeyring(ctx, e, "datakey status", "Print the data key's fingerprint (the one the database records) and, for each key version, the sealed values that still need it; with GATEWAY_CELLS, each cell's.", args,
		func(db *bun.DB, s *merchant.Sealer) error { return printKeyStatus(ctx, e, db, s) },
		func(ks []app.Keyring) error { return printCellsKeyStatus(ctx, e, ks) })
}

func printKeyStatus(ctx context.Context, e *env, db *bun.DB, s *merchant.Sealer) error {
	st, err := s.KeyStatus(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "data key fingerprint %s (recorded by the database)\n", s.Fingerprint())
	var left int64
	for _, v := range st {
		line := fmt.Sprintf("version %d", v.Version)
		if v.Version == 0 {
			line += " (the data key itself)"
		} else {
			line += " created " + v.CreatedAt.UTC().Format(time.RFC3339)
		}
		if v.Current {
			line += ", current"
		} else {
			left += v.Rows
		}
		if v.RetiredAt != nil {
			line += ", retired " + v.RetiredAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(e.stdout, "%s: %d sealed values\n", line, v.Rows)
	}
	fmt.Fprintf(e.stdout, "re-seal: %d sealed values under an older version\n", left)
	return nil
}

func cmdDataKeyRotate(ctx context.Context, e *env, args []string) error {
	return withKeyring(ctx, e, "datakey rotate", "Add a data key version and seal under it from now on; serve re-seals the older values in the background (or: gateway datakey reseal).\n"+
		"With GATEWAY_CELLS: the same version in every cell; run again after a failure part-way to finish it.", args,
		func(db *bun.DB, s *merchant.Sealer) error {
			v, err := s.Rotate(ctx, db)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "data key version %d added; running gateways seal under it within a minute and re-seal the older values\n", v)
			return printKeyStatus(ctx, e, db, s)
		}, func(ks []app.Keyring) error { return rotateCells(ctx, e, ks) })
}

func cmdDataKeyReseal(ctx context.Context, e *env, args []string) error {
	return withKeyring(ctx, e, "datakey reseal", "Move every sealed value to the current key version now, then retire the versions no value needs (those older than 10 minutes' overlap: a gateway started before the rotation may still seal under them).", args,
		func(db *bun.DB, s *merchant.Sealer) error {
			n, err := s.Reseal(ctx, db)
			if err != nil {
				return err
			}
			retired, err := s.RetireUnused(ctx, db, merchant.RetireAfter)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "re-sealed %d values under version %d; retired versions %v\n", n, s.CurrentVersion(), retired)
			return printKeyStatus(ctx, e, db, s)
		}, func(ks []app.Keyring) error { return resealCells(ctx, e, ks) })
}

// resealEvery is the background re-seal's period in serve: a new version
// made by `datakey rotate` elsewhere is adopted within it. A variable for
// the test of the loop, which sets it before any parallel test runs.
var resealEvery = time.Minute

// keepResealing is serve's background re-seal: it adopts the newest key
// version, moves the sealed values to it and retires the versions none
// needs, every period until ctx ends. Once a version is settled (nothing
// left under an older one, every older one retired) it only looks for a
// newer version: the re-seal's reads scan every sealed table. Failures are
// logged and retried at the next period: nothing depends on it finishing
// soon.
func keepResealing(ctx context.Context, log *slog.Logger, db *bun.DB, s *merchant.Sealer, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	settled := uint16(0) // version 0 has nothing older
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.Refresh(ctx, db); err != nil {
			log.Warn("data key: loading the key versions", "err", err)
			continue
		}
		cur := s.CurrentVersion()
		if cur == settled {
			continue
		}
		n, err := s.Reseal(ctx, db)
		if err != nil {
			log.Warn("data key: re-seal", "err", err, "resealed", n)
			continue
		}
		retired, err := s.RetireUnused(ctx, db, merchant.RetireAfter)
		if err != nil {
			log.Warn("data key: retiring versions", "err", err)
			continue
		}
		if n > 0 || len(retired) > 0 {
			log.Info("data key: re-sealed", "values", n, "version", cur, "retired", retired)
		}
		if done, err := resealDone(ctx, db, s); err == nil && done {
			settled = cur
		}
	}
}

// resealDone reports whether no sealed value needs an older version than
// the current one and every older version ≥ 1 is retired.
func resealDone(ctx context.Context, db *bun.DB, s *merchant.Sealer) (bool, error) {
	st, err := s.KeyStatus(ctx, db)
	if err != nil {
		return false, err
	}
	for _, v := range st {
		if !v.Current && (v.Rows > 0 || (v.Version > 0 && v.RetiredAt == nil)) {
			return false, nil
		}
	}
	return true, nil
}
