package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/paygate/gateway/internal/config"
)

// InternalTokenFile is where serve keeps the internal API's bearer token
// when GATEWAY_INTERNAL_TOKEN is not set.
const InternalTokenFile = "internal-token"

// InternalToken is the internal API's bearer token: GATEWAY_INTERNAL_TOKEN
// (checked by internal/config), else the one in
// $GATEWAY_DATA_DIR/internal-token. With create, a missing file is made
// with a random token (mode 0600). It returns where the token came from,
// for the log; never the token itself.
func InternalToken(cfg *config.Config, create bool) (token, source string, err error) {
	if cfg.InternalToken != "" {
		return cfg.InternalToken, "GATEWAY_INTERNAL_TOKEN", nil
	}
	path, _ := filepath.Abs(filepath.Join(cfg.DataDir, InternalTokenFile))
	b, err := os.ReadFile(path)
	if err == nil {
		t := strings.TrimSpace(string(b))
		if !config.IsTokenText(t) {
			return "", "", fmt.Errorf("%s does not hold a token", path)
		}
		return t, path, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", "", err
	}
	if !create {
		return "", "", fmt.Errorf("no internal API token: set GATEWAY_INTERNAL_TOKEN, or start `gateway serve` once to create %s", path)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", "", err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return InternalToken(cfg, false) // another process made it first
	}
	if err != nil {
		return "", "", err
	}
	t := "itk_" + hex.EncodeToString(raw)
	if _, err := f.WriteString(t + "\n"); err != nil {
		f.Close()
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	return t, path, nil
}
