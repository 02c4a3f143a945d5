package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/postings"
)

// The text rules every page shares: how a value is made safe for the audit
// trail, how a refusal names its field, what a control character is.

// AuditTargetMax and AuditDetailMax are the audit trail's columns' bounds
// (characters).
const (
	AuditTargetMax = 200
	AuditDetailMax = 1000
)

// SafeValue is v as the audit trail may hold it in at most max characters
// (docs/console.md, "The audit trail"): text that postings.CheckText
// accepts, within the bound, as it is; anything else — invalid UTF-8 (an
// upload's file name, a path segment such as %FF), NUL, a bidirectional
// override, a value past the bound — escaped (\xFF for a byte that is not
// UTF-8, \u{202E} for a refused character, a backslash doubled), cut to the
// bound, with the SHA-256 of the original bytes after it ("… [sha256
// ab12…]"). So PostgreSQL never refuses a row for its bytes (SQLSTATE
// 22021), the trail shows what was sent without being reordered by it,
// and the hash tells two values apart when the cut made them look the same.
func SafeValue(v string, max int) string {
	if postings.CheckText("", v, max) == nil {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02X`, v[i])
		case r == '\\':
			b.WriteString(`\\`)
		case !postings.TextRuneAllowed(r):
			fmt.Fprintf(&b, `\u{%04X}`, r)
		default:
			b.WriteString(v[i : i+n])
		}
		i += n
	}
	esc := b.String()
	sum := sha256.Sum256([]byte(v))
	suffix := " [sha256 " + hex.EncodeToString(sum[:]) + "]"
	keep := max - utf8.RuneCountInString(suffix)
	if keep < 0 {
		keep = 0 // a bound shorter than the hash: the hash alone, past it
	}
	if n := utf8.RuneCountInString(esc); n > keep {
		esc = string([]rune(esc)[:keep])
	}
	return esc + suffix
}

// Clip cuts s to at most n bytes, on a character boundary.
func Clip(s string, n int) string { return store.Clip(s, n) }

// HasControl reports whether s holds a C0 or C1 control character.
func HasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// FieldMessage is a refusal as a page shows it: "field: message".
func FieldMessage(err error) string {
	e := postings.AsError(err)
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// ClientAddr is the peer's address. The console listens on loopback by
// default and trusts no proxy header: the address is the connection's.
func ClientAddr(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return Clip(r.RemoteAddr, 64)
	}
	return Clip(h, 64)
}
