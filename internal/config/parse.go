package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/paygate/gateway/postings"
)

// Error is a setting the gateway cannot run with. It names the variable
// and the flag, the one the value came from first.
type Error struct {
	Env      string // the variable
	Flag     string // the flag, without dashes; "" when the setting has none
	FromFlag bool   // the value came from the flag
	Reason   string // what is wrong, with the value unless it is a secret
}

func (e *Error) Error() string {
	switch {
	case e.FromFlag:
		return fmt.Sprintf("--%s (%s): %s", e.Flag, e.Env, e.Reason)
	case e.Flag != "":
		return fmt.Sprintf("%s (--%s): %s", e.Env, e.Flag, e.Reason)
	}
	return e.Env + ": " + e.Reason
}

// Flags are the settings' flags on a command's flag set. Parse the flag
// set, then Load.
type Flags struct {
	c        *Config
	settings []*setting
	values   map[*setting]*flagValue
}

// AddFlags registers every setting's flag on fs. fs may be nil: no flags,
// the environment and the defaults only.
func AddFlags(fs *flag.FlagSet) *Flags {
	c := &Config{}
	f := &Flags{c: c, settings: c.settings(), values: map[*setting]*flagValue{}}
	if fs == nil {
		return f
	}
	for _, s := range f.settings {
		if s.flag == "" {
			continue
		}
		v := &flagValue{isBool: s.isBool}
		f.values[s] = v
		def := s.def
		if def == "" {
			def = "none"
		}
		fs.Var(v, s.flag, fmt.Sprintf("%s (%s; default %s)", s.usage, s.env, def))
	}
	return f
}

// Load reads every setting: its flag when given on the command line, else
// its variable when set (and not blank), else its default. It returns the
// first value the gateway cannot run with, as an *Error. getenv is
// os.Getenv in production.
func (f *Flags) Load(getenv func(string) string) (*Config, error) {
	c := f.c
	c.effective = c.effective[:0]
	for _, s := range f.settings {
		e := effective{s: s, value: s.def, from: SourceDefault}
		if v := f.values[s]; v != nil && v.set {
			e.value, e.from = strings.TrimSpace(v.text), SourceFlag
		} else if v := strings.TrimSpace(getenv(s.env)); v != "" {
			e.value, e.from = v, SourceEnv
		}
		c.effective = append(c.effective, e)
		if err := s.parse(e.value); err != nil {
			return nil, &Error{Env: s.env, Flag: s.flag, FromFlag: e.from == SourceFlag, Reason: err.Error()}
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// FromEnvironment reads the configuration from the environment and the
// defaults: the operator's commands, which take no serve flags.
func FromEnvironment(getenv func(string) string) (*Config, error) {
	return AddFlags(nil).Load(getenv)
}

// Default is the configuration of an empty environment.
func Default() *Config {
	c, err := FromEnvironment(func(string) string { return "" })
	if err != nil {
		panic("config: the defaults do not load: " + err.Error()) // a defect of settings.go
	}
	return c
}

// Attrs is the configuration as it applies, for the start-up log line:
// every setting by its variable, secrets masked (the data key and the
// internal token show only that they are set, DATABASE_URL without its
// password), and which came from the environment and which from flags.
func (c *Config) Attrs() []slog.Attr {
	values := make([]any, 0, len(c.effective))
	var fromEnv, fromFlags []string
	for _, e := range c.effective {
		v := e.value
		if e.s.masked != nil {
			v = e.s.masked(v)
		}
		values = append(values, slog.String(e.s.env, v))
		switch e.from {
		case SourceEnv:
			fromEnv = append(fromEnv, e.s.env)
		case SourceFlag:
			fromFlags = append(fromFlags, "--"+e.s.flag)
		}
	}
	return []slog.Attr{
		slog.Group("settings", values...),
		slog.String("from_env", strings.Join(fromEnv, ",")),
		slog.String("from_flags", strings.Join(fromFlags, ",")),
	}
}

// Source tells where the setting of a variable came from ("" for an
// unknown variable).
func (c *Config) Source(env string) Source {
	for _, e := range c.effective {
		if e.s.env == env {
			return e.from
		}
	}
	return ""
}

// errorOf is an *Error about the setting of a variable.
func (c *Config) errorOf(env, reason string) error {
	for _, e := range c.effective {
		if e.s.env == env {
			return &Error{Env: env, Flag: e.s.flag, FromFlag: e.from == SourceFlag, Reason: reason}
		}
	}
	return &Error{Env: env, Reason: reason}
}

// fieldError turns another package's refusal of a setting (a
// postings.Error whose field is the variable, as httplimits.Limits.Check's) into
// an *Error.
func (c *Config) fieldError(err error) error {
	var pe *postings.Error
	if errors.As(err, &pe) && pe.Field != "" {
		return c.errorOf(pe.Field, strings.TrimPrefix(strings.TrimPrefix(pe.Message, pe.Field), ": "))
	}
	return err
}

// flagValue is a flag's text, and whether the command line gave it.
type flagValue struct {
	text   string
	set    bool
	isBool bool
}

func (v *flagValue) String() string { return v.text }

func (v *flagValue) Set(s string) error {
	v.text, v.set = s, true
	return nil
}

// IsBoolFlag lets a boolean setting's flag stand alone (--demo).
func (v *flagValue) IsBoolFlag() bool { return v.isBool }

// Variables names every setting's variable, in the order of settings.
func Variables() []string {
	var out []string
	for _, s := range (&Config{}).settings() {
		out = append(out, s.env)
	}
	return out
}

// Flag is the flag of a variable, "" when it has none.
func Flag(env string) string {
	for _, s := range (&Config{}).settings() {
		if s.env == env {
			return s.flag
		}
	}
	return ""
}
