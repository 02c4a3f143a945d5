package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/merchant"
)

// DataKeyFile is the data key's file in a data directory.
func DataKeyFile(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "data.key") }

// LoadSealer returns the data key's sealer, checked against the database
// (merchant.OpenKeyring): GATEWAY_DATA_KEY, or the key file in the data
// directory. A new key is made (mode 0600) only for a database no key is
// bound to yet — a newcomer's first `make run`; a bound database with no
// key, or another key, is refused with a *merchant.DataKeyError (exit 2)
// naming the fingerprint it expects and the one found. Losing the key loses
// every sealed secret: keep it beside the backups (docs/operations.md).
func LoadSealer(ctx context.Context, cfg *config.Config, db *bun.DB) (*merchant.Sealer, error) {
	if cfg.DataKey != nil {
		return merchant.OpenKeyring(ctx, db, cfg.DataKey, "GATEWAY_DATA_KEY")
	}
	path := DataKeyFile(cfg)
	key, err := ReadDataKeyFile(path)
	if errors.Is(err, os.ErrNotExist) {
		bound, berr := merchant.BoundFingerprint(ctx, db)
		if berr != nil {
			return nil, berr
		}
		if bound != "" {
			return nil, &merchant.DataKeyError{Expected: bound, Source: path + " or GATEWAY_DATA_KEY"}
		}
		if key, err = newDataKeyFile(cfg.DataDir, path); errors.Is(err, os.ErrExist) {
			return LoadSealer(ctx, cfg, db) // another process made it first
		}
	}
	if err != nil {
		return nil, err
	}
	return merchant.OpenKeyring(ctx, db, key, path)
}

// ReadDataKeyFile reads a data key file: 64 hex digits and a newline.
func ReadDataKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the operator's own key file
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != merchant.DataKeyBytes {
		return nil, fmt.Errorf("%s: not a data key (64 hex digits)", path)
	}
	return key, nil
}

// newDataKeyFile makes a random key in path, failing with os.ErrExist when
// the file appeared meanwhile.
func newDataKeyFile(dir, path string) ([]byte, error) {
	key := make([]byte, merchant.DataKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600) //nolint:gosec // the configured data directory
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}

// KeepResealing is serve's background re-seal: it adopts the newest key
// version, moves the sealed values to it and retires the versions none
// needs, every period until ctx ends. Once a version is settled (nothing
// left under an older one, every older one retired) it only looks for a
// newer version: the re-seal's reads scan every sealed table. Failures are
// logged and retried at the next period: nothing depends on it finishing
// soon.
func KeepResealing(ctx context.Context, log *slog.Logger, db *bun.DB, s *merchant.Sealer, every time.Duration) {
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
