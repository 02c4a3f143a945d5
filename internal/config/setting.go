package config

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// setting is one line of settings: a variable, its flag, its default and
// how its text becomes a field of Config.
type setting struct {
	env    string
	flag   string // "" : no flag
	def    string // the default, as text
	usage  string
	isBool bool                  // a bool flag needs no value: --demo
	parse  func(v string) error  // v is trimmed; it sets the field
	masked func(v string) string // nil: shown as it is
}

// flagName is the flag of a variable: GATEWAY_HOLD_EXPIRY is --hold-expiry.
func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "GATEWAY_")), "_", "-")
}

func newSetting(env, def, usage string, parse func(string) error) *setting {
	return &setting{env: env, flag: flagName(env), def: def, usage: usage, parse: parse}
}

// noFlag leaves the setting to the environment.
func (s *setting) noFlag() *setting {
	s.flag = ""
	return s
}

// mask shows the setting's value through m in the start-up line.
func (s *setting) mask(m func(string) string) *setting {
	s.masked = m
	return s
}

// text is a string setting; check (nil: any text) refuses a value.
func text(to *string, env, def, usage string, check func(string) error) *setting {
	return newSetting(env, def, usage, func(v string) error {
		if check != nil {
			if err := check(v); err != nil {
				return err
			}
		}
		if to != nil {
			*to = v
		}
		return nil
	})
}

func boolean(to *bool, env, usage string) *setting {
	s := newSetting(env, "false", usage, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*to = b
		return nil
	})
	s.isBool = true
	return s
}

// Duration bounds.
var (
	positive    = time.Duration(1)
	nonNegative = time.Duration(0)
)

// duration is a Go duration ("10s", "1m30s") of at least min and at most a
// year: a longer one is a typo, not a choice.
func duration(to *time.Duration, env, def, usage string, min time.Duration) *setting {
	const most = 366 * 24 * time.Hour
	return newSetting(env, def, usage, func(v string) error {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil && min > 0:
			return fmt.Errorf("%q is not a positive duration such as 10s", v)
		case err != nil:
			return fmt.Errorf("%q is not a duration such as 10s or 0s", v)
		case d < min && min > positive:
			return fmt.Errorf("%q is shorter than %v", v, min)
		case d < min && min > 0:
			return fmt.Errorf("%q is not a positive duration such as 10s", v)
		case d < min:
			return fmt.Errorf("%q is negative", v)
		case d > most:
			return fmt.Errorf("%q is longer than %v", v, most)
		}
		*to = d
		return nil
	})
}

// integer is a decimal integer from lo to hi.
func integer(to *int, env, def, usage string, lo, hi int) *setting {
	return newSetting(env, def, usage, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%q is not a whole number from %d to %d", v, lo, hi)
		}
		*to = n
		return nil
	})
}

// intOrOff is integer, or "off" for no bound (-1).
func intOrOff(to *int, env, def, usage string, lo, hi int) *setting {
	return newSetting(env, def, usage, func(v string) error {
		if strings.EqualFold(v, "off") {
			*to = -1
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%q is not a whole number from %d to %d, or off", v, lo, hi)
		}
		*to = n
		return nil
	})
}

// rps is a positive rate per second, or "off" (-1).
func rps(to *float64, env, def, usage string) *setting {
	return newSetting(env, def, usage, func(v string) error {
		if strings.EqualFold(v, "off") {
			*to = -1
			return nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) || f > 1e9 {
			return fmt.Errorf("%q is not a positive number or off", v)
		}
		*to = f
		return nil
	})
}

// dataKeyBytes is merchant.DataKeyBytes (config does not open the ledger).
const dataKeyBytes = 32

// bytesHex is a key of n bytes in hex; "" leaves it nil. The message never
// repeats the value: it is a secret.
func bytesHex(to *[]byte, env string, n int, usage string) *setting {
	return newSetting(env, "", usage, func(v string) error {
		if v == "" {
			*to = nil
			return nil
		}
		b, err := hex.DecodeString(v)
		if err != nil || len(b) != n {
			return fmt.Errorf("must be %d hex digits", 2*n)
		}
		*to = b
		return nil
	})
}

func logLevel(to *slog.Level, env, def, usage string) *setting {
	return newSetting(env, def, usage, func(v string) error {
		var l slog.Level
		if err := l.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("%q is not debug, info, warn or error", v)
		}
		*to = l
		return nil
	})
}

// prefixes is a comma-separated list of CIDR prefixes or single addresses
// (an address is its own /32 or /128); IPv4-mapped IPv6 is read as IPv4,
// as the addresses it is compared with are.
func prefixes(to *[]netip.Prefix, env, usage string) *setting {
	return newSetting(env, "", usage, func(v string) error {
		var out []netip.Prefix
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			p, err := parsePrefix(f)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		*to = out
		return nil
	})
}

func parsePrefix(f string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(f); err == nil {
		a := p.Addr()
		bits := p.Bits()
		if a.Is4In6() {
			if bits < 96 {
				return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped prefix shorter than /96", f)
			}
			a, bits = a.Unmap(), bits-96
		}
		return netip.PrefixFrom(a, bits).Masked(), nil
	}
	a, err := netip.ParseAddr(f)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither an IP address nor a CIDR prefix", f)
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}
