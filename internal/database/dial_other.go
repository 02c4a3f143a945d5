//go:build !linux

package database

import "time"

// setUserTimeout does nothing where TCP_USER_TIMEOUT does not exist: the
// keepalives and the Watch still apply.
func setUserTimeout(uintptr, time.Duration) error { return nil }
