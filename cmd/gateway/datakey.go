package main

import (
	"context"
	"time"

	"github.com/paygate/gateway/cmd/gateway/internal/cellcmd"
	"github.com/paygate/gateway/internal/app"
)

// The data key's commands (docs/security.md, "The data key"): its
// fingerprint and the re-seal's progress, a new key version, and the
// re-seal in the foreground. Each opens the key as serve does, so each is
// refused (exit 2) with a key the database does not record.

// withKeyrings opens the ledger (which checks the key) and runs do with
// its keyring; with GATEWAY_CELLS, every cell's (each checked: a cell bound
// to another key is refused, named). The work is cellcmd's.
func withKeyrings(ctx context.Context, e *env, name, summary string, args []string, do func(ks []app.Keyring) error) error {
	fs := newFlags(e, name, summary)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if len(cfg.Cells) > 0 {
		ks, closeAll, err := cellEnv(e, cfg).Keyrings(ctx)
		if err != nil {
			return err
		}
		defer closeAll()
		return do(ks)
	}
	st, l, err := openLedger(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	defer l.Close()
	return do([]app.Keyring{{DB: l.DB(), Sealer: l.Sealer()}})
}

func cmdDataKeyStatus(ctx context.Context, e *env, args []string) error {
	return withKeyrings(ctx, e, "datakey status", "Print the data key's fingerprint (the one the database records) and, for each key version, the sealed values that still need it; with GATEWAY_CELLS, each cell's.", args,
		func(ks []app.Keyring) error { return cellcmd.KeyStatus(ctx, e.stdout, ks) })
}

func cmdDataKeyRotate(ctx context.Context, e *env, args []string) error {
	return withKeyrings(ctx, e, "datakey rotate", "Add a data key version and seal under it from now on; serve re-seals the older values in the background (or: gateway datakey reseal).\n"+
		"With GATEWAY_CELLS: the same version in every cell; run again after a failure part-way to finish it.", args,
		func(ks []app.Keyring) error { return cellcmd.Rotate(ctx, e.stdout, ks) })
}

func cmdDataKeyReseal(ctx context.Context, e *env, args []string) error {
	return withKeyrings(ctx, e, "datakey reseal", "Move every sealed value to the current key version now, then retire the versions no value needs (those older than 10 minutes' overlap: a gateway started before the rotation may still seal under them); with GATEWAY_CELLS, in every cell.", args,
		func(ks []app.Keyring) error { return cellcmd.Reseal(ctx, e.stdout, ks) })
}

// resealEvery is the background re-seal's period in serve
// (app.KeepResealing): a new version made by `datakey rotate` elsewhere is
// adopted within it. A variable for the test of the loop, which sets it
// before any parallel test runs.
var resealEvery = time.Minute
