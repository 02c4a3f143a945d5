// Package callbackurl holds the rules for a callback URL and for the
// addresses a callback may reach. It is pure (standard library only) so
// that every door that takes a URL — the /shop API, the operator's
// commands — and the callback sender apply the same function with the same
// allow list (read by internal/config), without importing each other.
//
// The rules are applied twice, and end in one function (Judge, over the
// table of registry.go) at both places:
//
//   - when a URL is given (Validate): length, characters, scheme, user
//     info, host syntax, port, and the host: an IP literal against
//     AllowList.Check, a reserved name refused or judged as the address
//     it names (names.go). Other host names are not resolved then: DNS
//     can answer differently later.
//   - when connecting (Dialer, the sender's transport dialer): the same
//     host rules, then every resolved address against AllowList.Check
//     before any is dialled, and the socket's address again
//     (AllowList.Control), which also catches a name that resolves (or
//     later re-resolves) to a refused address.
//
// docs/callbacks.md describes both to merchants.
package callbackurl

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// BytesMax bounds a callback URL.
const BytesMax = 2048

// hostBytesMax and labelBytesMax are DNS's bounds on a name and a label.
const (
	hostBytesMax  = 253
	labelBytesMax = 63
)

// ErrInvalid is wrapped by every error of Validate.
var ErrInvalid = errors.New("callbacks: invalid callback URL")

// Error is a refused URL. Reason is phrased to follow the field's name
// ("callback_url: must use http or https") and never repeats the URL,
// which may hold a merchant's token.
type Error struct {
	Reason  string
	blocked *BlockedAddressError
}

func (e *Error) Error() string { return ErrInvalid.Error() + ": " + e.Reason }

// Unwrap gives ErrInvalid and, for a refused address, the
// *BlockedAddressError.
func (e *Error) Unwrap() []error {
	if e.blocked != nil {
		return []error{ErrInvalid, e.blocked}
	}
	return []error{ErrInvalid}
}

// Validate checks a callback URL when it is given, and again before each
// attempt: at most BytesMax bytes of printable ASCII (no space, control
// character or raw non-ASCII byte: percent-encode a path, punycode a
// name), scheme http or https, an absolute URL with a host and no user
// info, a port from 1 to 65535 when one is written, and a host that is
// either an IP literal (no IPv6 zone) or a DNS name of letters, digits,
// '-' and '_' in labels of at most 63 bytes (253 in all) whose last label
// is not numeric (2130706433, 127.1, 0x7f.1 and 0177.0.0.1 are IPv4
// addresses to some resolvers, so they are refused). An IP literal, and a
// name whose address is known (hosts file, cloud metadata), must pass
// allow.Check, the rule the dialer applies to every resolved address
// (Judge); other reserved names are refused too (names.go). Errors are
// *Error.
func Validate(raw string, allow AllowList) error {
	invalid := func(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }
	if raw == "" {
		return invalid("must not be empty")
	}
	if len(raw) > BytesMax {
		return invalid("is longer than %d bytes", BytesMax)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] <= 0x20 || raw[i] >= 0x7f {
			return invalid("must be printable ASCII: no space, control character or raw non-ASCII byte (percent-encode them)")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return invalid("does not parse as a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalid("must be an absolute URL with scheme http or https")
	}
	if u.Opaque != "" {
		return invalid("must be an absolute URL (scheme://host/…)")
	}
	if u.User != nil {
		return invalid("must not contain user info (a name or secret before @)")
	}
	host := u.Hostname()
	if host == "" {
		return invalid("must have a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return invalid("has a port out of range (1 to 65535)")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return invalid("has an empty port")
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return invalid("has a malformed IPv6 address")
		}
		if a.Zone() != "" {
			return invalid("must not have an IPv6 zone")
		}
		return checkAddr(allow, a, a.String())
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		return checkAddr(allow, a, a.String())
	}
	return checkHost(allow, host)
}

// checkHost checks the syntax of a host that is not an IP literal, then
// the name (checkName).
func checkHost(allow AllowList, host string) error {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "" || len(name) > hostBytesMax {
		return &Error{Reason: fmt.Sprintf("must have a host name of 1 to %d characters", hostBytesMax)}
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if !isLabel(label) {
			return &Error{Reason: "must have a host name of letters, digits, '-' and '_' in dot-separated labels of 1 to 63 characters"}
		}
	}
	if isNumericLabel(labels[len(labels)-1]) {
		return &Error{Reason: "must write an IPv4 address in dotted-decimal form (a.b.c.d), or use a host name"}
	}
	return checkName(allow, name)
}

// checkAddr checks an IP literal, or the address a name surely names,
// against the allow list.
func checkAddr(allow AllowList, a netip.Addr, text string) error {
	err := allow.Check(a)
	if err == nil {
		return nil
	}
	blocked := err.(*BlockedAddressError)
	return &Error{Reason: fmt.Sprintf("names %s, a %s address, which callbacks may not reach", text, blocked.Reason), blocked: blocked}
}

// isLabel reports a DNS label of letters, digits, '-' and '_' (seen in
// real names though not in host names), 1 to 63 bytes, with no '-' at
// either end.
func isLabel(s string) bool {
	if s == "" || len(s) > labelBytesMax || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// isNumericLabel reports a label that the URL standard (WHATWG) and
// inet_aton read as a number: decimal digits, or 0x and hex digits.
func isNumericLabel(s string) bool {
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		for i := 0; i < len(h); i++ {
			if !strings.ContainsRune("0123456789abcdef", rune(h[i])) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
