package console

import (
	"time"

	"github.com/paygate/gateway/internal/console/auth"
)

// The TOTP helpers the commands (gateway console user create, the demo
// set-up) and the browser tests call, now internal/console/auth's, kept
// under their old names.

// NewTOTPSecret returns a fresh secret in base32 (auth.NewTOTPSecret).
func NewTOTPSecret() (string, error) { return auth.NewTOTPSecret() }

// TOTPCode is the code of secret at time t (auth.TOTPCode).
func TOTPCode(secret string, t time.Time) (string, error) { return auth.TOTPCode(secret, t) }
