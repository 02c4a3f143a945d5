package database

import (
	"crypto/rand"
	"database/sql"
	"time"

	"github.com/uptrace/bun"
)

// Row helpers every package uses, so that every package writes nullable
// columns and ids the same way.

// NullString is s as a nullable column: NULL when empty.
func NullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// NullText is a nullable text parameter of a prepared statement.
func NullText(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// NullTime is a nullable timestamptz parameter of a prepared statement.
func NullTime(t bun.NullTime) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t.Time
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// RandomID returns n characters of [a-z0-9] from crypto/rand: the random
// part of every id the gateway makes (cards, transfers, events, …).
func RandomID(n int) string {
	out := make([]byte, n)
	buf := make([]byte, n+n/2)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic(err)
		}
		for _, b := range buf {
			// 252 = 7 × 36: rejecting the rest keeps every character equally likely.
			if b < 252 && i < n {
				out[i] = idAlphabet[int(b)%36]
				i++
			}
		}
	}
	return string(out)
}
