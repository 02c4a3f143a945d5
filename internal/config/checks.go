package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/postings"
)

// The bounds of httplimits.Limits, which the API enforces.
const (
	headerBytesMin    = httplimits.HeaderBytesMin
	headerBytesMax    = httplimits.HeaderBytesLimit
	connsPerClientMax = httplimits.ConnsPerClientLimit
)

func nonEmpty(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// checkListenAddr accepts host:port with a port from 0 (any free one) to
// 65535; an empty host listens on every address.
func checkListenAddr(v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%q is not host:port", v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number from 0 to 65535", v)
	}
	if strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("%q is not host:port", v)
	}
	return nil
}

// checkPprofAddr accepts a loopback address only: profiles describe the
// process's insides and the listener has no authentication.
func checkPprofAddr(v string) error {
	if v == "" {
		return nil
	}
	if err := checkListenAddr(v); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(v)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("must be a loopback address such as 127.0.0.1:6060, not %q", v)
	}
	return nil
}

// checkToken: at least internalTokenBytesMin printable ASCII characters
// without spaces. The message does not repeat the value.
func checkToken(v string) error {
	if v == "" {
		return nil
	}
	if !IsTokenText(v) {
		return fmt.Errorf("must be at least %d printable ASCII characters without spaces", internalTokenBytesMin)
	}
	return nil
}

// IsTokenText tells whether s may be the internal API's token: long enough,
// printable ASCII, no spaces (the token file is checked the same way).
func IsTokenText(s string) bool {
	if len(s) < internalTokenBytesMin {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// checkDatabaseURL accepts what the ledger's driver accepts: a postgres://
// URL or a key=value string. The driver's message masks the password.
func checkDatabaseURL(v string) error {
	if v == "" {
		return nil
	}
	if _, err := pgx.ParseConfig(v); err != nil {
		return fmt.Errorf("is not a PostgreSQL URL such as postgres://user@host/db: %v", err)
	}
	return nil
}

func checkGOGC(v string) error {
	if v == "" || v == "off" {
		return nil
	}
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return fmt.Errorf("%q is not a percentage (a whole number) or off", v)
	}
	return nil
}

// memLimit is Go's syntax of GOMEMLIMIT (runtime/debug.SetMemoryLimit).
var memLimit = regexp.MustCompile(`^[0-9]+(B|KiB|MiB|GiB|TiB)?$`)

func checkGOMEMLIMIT(v string) error {
	if v == "" || v == "off" || memLimit.MatchString(v) {
		return nil
	}
	return fmt.Errorf("%q is not a size such as 150MiB, or off", v)
}

// currencyAmounts is "USD:1000000.00,JPY:150000000": a positive amount per
// currency, with at most the currency's decimals, in minor units. Empty is
// no entry.
func currencyAmounts(to *map[string]int64, env, usage string) *setting {
	return newSetting(env, "", usage, func(v string) error {
		m, err := parseCurrencyAmounts(v)
		if err != nil {
			return err
		}
		*to = m
		return nil
	})
}

func parseCurrencyAmounts(s string) (map[string]int64, error) {
	out := map[string]int64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		code, amount, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, fmt.Errorf("%q is not CUR:amount", item)
		}
		cur, err := postings.LookupCurrency(code)
		if err != nil {
			return nil, fmt.Errorf("%q is not a supported ISO 4217 currency code", code)
		}
		if _, dup := out[cur.Code]; dup {
			return nil, fmt.Errorf("%s appears twice", cur.Code)
		}
		minor, err := postings.ParseAmount(amount, cur)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %s", cur.Code, amount, postings.AsError(err).Message)
		}
		out[cur.Code] = minor
	}
	return out, nil
}

// percentBps is a percentage from 0 to 100 with at most two decimals
// ("20", "12.5"), in basis points.
func percentBps(to *int64, env, def, usage string) *setting {
	return newSetting(env, def, usage, func(v string) error {
		bps, err := parsePercentBps(v)
		if err != nil {
			return err
		}
		*to = bps
		return nil
	})
}

func parsePercentBps(s string) (int64, error) {
	bad := fmt.Errorf("%q is not a percentage from 0 to 100 with at most 2 decimals", s)
	whole, frac, hasFrac := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" || len(whole) > 3 || (hasFrac && (frac == "" || len(frac) > 2)) {
		return 0, bad
	}
	for len(frac) < 2 {
		frac += "0"
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, bad
		}
	}
	bps, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || bps > 100_00 {
		return 0, bad
	}
	return bps, nil
}

// maskAll hides a secret entirely: the line says whether it is set.
func maskAll(v string) string {
	if v == "" {
		return ""
	}
	return "(set, masked)"
}

// dsnPassword is a password in a key=value string or a URL's query.
var dsnPassword = regexp.MustCompile(`(password=)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// maskDatabaseURL hides the password of a URL's user information, of its
// query (password=) and of a key=value string.
func maskDatabaseURL(v string) string {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		v = u.String()
	}
	return dsnPassword.ReplaceAllString(v, "${1}xxxxx")
}
