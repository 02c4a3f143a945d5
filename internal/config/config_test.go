package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/network"
)

// load parses args as serve's flags, then the configuration from env.
func load(args []string, env map[string]string) (*Config, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f.Load(func(k string) string { return env[k] })
}

// malformed is, for every setting, values the gateway must refuse, with
// what the error must say. Each case is a variable's value, or flags.
var malformed = []struct {
	env   string
	value string
	args  []string // flags instead of the variable
	want  string
}{
	{env: "DATABASE_URL", value: "postgres://db:notaport/gateway", want: "DATABASE_URL: is not a PostgreSQL URL"},
	{env: "DATABASE_URL", value: "postgres://u:hunter2@db:notaport/gateway", want: "DATABASE_URL: is not a PostgreSQL URL"},
	{env: "DATABASE_READ_URL", value: "postgres://u:hunter2@db:notaport/gateway", want: "DATABASE_READ_URL: is not a PostgreSQL URL"},
	{env: "DATABASE_READ_WAIT_MS", value: "10001", want: "DATABASE_READ_WAIT_MS"},
	{env: "GATEWAY_CELLS", value: "a1=postgres://u:hunter2@db:notaport/gateway", want: "GATEWAY_CELLS: cell a1: is not a PostgreSQL URL"},
	{env: "GATEWAY_CELLS_READ_URLS", value: "a1=postgres://u:hunter2@db:notaport/gateway", want: "GATEWAY_CELLS_READ_URLS: cell a1: is not a PostgreSQL URL"},
	{env: "DATABASE_READ_WAIT_MS", value: "-1", want: "DATABASE_READ_WAIT_MS"},
	{env: "DATABASE_READ_WAIT_MS", value: "250ms", want: "DATABASE_READ_WAIT_MS"},
	{env: "GATEWAY_DATA_DIR", args: []string{"--data-dir", ""}, want: "--data-dir (GATEWAY_DATA_DIR): must not be empty"},
	{env: "GATEWAY_DATA_KEY", value: "not-hex", want: "GATEWAY_DATA_KEY: must be 64 hex digits"},
	{env: "GATEWAY_DATA_KEY", value: "abcd", want: "GATEWAY_DATA_KEY: must be 64 hex digits"},
	{env: "GATEWAY_ADDR", value: "127.0.0.1:99999", want: `GATEWAY_ADDR (--addr): "127.0.0.1:99999": the port must be a number from 0 to 65535`},
	{env: "GATEWAY_ADDR", value: "nonsense", want: `GATEWAY_ADDR (--addr): "nonsense" is not host:port`},
	{env: "GATEWAY_ADDR", args: []string{"--addr", "127.0.0.1:-1"}, want: "--addr (GATEWAY_ADDR): "},
	{env: "GATEWAY_INTERNAL_ADDR", value: "localhost", want: `GATEWAY_INTERNAL_ADDR (--internal-addr): "localhost" is not host:port`},
	{env: "GATEWAY_CONSOLE_ADDR", value: "localhost", want: `GATEWAY_CONSOLE_ADDR (--console-addr): "localhost" is not host:port`},
	{env: "GATEWAY_CONSOLE_ADDR", value: "Off", want: `GATEWAY_CONSOLE_ADDR (--console-addr)`},
	{env: "GATEWAY_INTERNAL_TOKEN", value: "short", want: "GATEWAY_INTERNAL_TOKEN: must be at least 16 printable"},
	{env: "GATEWAY_INTERNAL_TOKEN", value: "sixteen chars with spaces", want: "GATEWAY_INTERNAL_TOKEN: must be at least 16 printable"},
	{env: "GATEWAY_PLAIN_HTTP", value: "yes please", want: `GATEWAY_PLAIN_HTTP (--plain-http): "yes please" is not true or false`},
	{env: "GATEWAY_PLAIN_HTTP", args: []string{"--plain-http=maybe"}, want: `--plain-http (GATEWAY_PLAIN_HTTP): "maybe" is not true or false`},
	{env: "GATEWAY_CONSOLE_IDLE_TIMEOUT", value: "0s", want: `GATEWAY_CONSOLE_IDLE_TIMEOUT (--console-idle-timeout): "0s" is shorter than 1m0s`},
	{env: "GATEWAY_CONSOLE_IDLE_TIMEOUT", value: "13h", want: `GATEWAY_CONSOLE_IDLE_TIMEOUT (--console-idle-timeout): 13h0m0s is longer than the absolute expiry GATEWAY_CONSOLE_SESSION_MAX (12h0m0s)`},
	{env: "GATEWAY_CONSOLE_SESSION_MAX", value: "10m", want: `GATEWAY_CONSOLE_SESSION_MAX (--console-session-max): 10m0s is shorter than the idle expiry GATEWAY_CONSOLE_IDLE_TIMEOUT (30m0s)`},
	{env: "GATEWAY_CONSOLE_SESSION_MAX", value: "200h", want: `GATEWAY_CONSOLE_SESSION_MAX (--console-session-max): 200h0m0s is longer than 168h0m0s`},
	{env: "GATEWAY_CONSOLE_SESSION_MAX", value: "soon", want: `GATEWAY_CONSOLE_SESSION_MAX (--console-session-max): "soon"`},
	{env: "GATEWAY_CONSOLE_LOCKOUT_TRIES", value: "0", want: `GATEWAY_CONSOLE_LOCKOUT_TRIES (--console-lockout-tries): "0" is not a whole number from 1 to 100`},
	{env: "GATEWAY_CONSOLE_LOCKOUT_TRIES", value: "101", want: `GATEWAY_CONSOLE_LOCKOUT_TRIES (--console-lockout-tries)`},
	{env: "GATEWAY_CONSOLE_LOCKOUT_DURATION", value: "30s", want: `GATEWAY_CONSOLE_LOCKOUT_DURATION (--console-lockout-duration): "30s" is shorter than 1m0s`},
	{env: "GATEWAY_CONSOLE_LOCKOUT_DURATION", value: "25h", want: `GATEWAY_CONSOLE_LOCKOUT_DURATION (--console-lockout-duration): 25h0m0s is longer than 24h0m0s`},
	{env: "GATEWAY_CONSOLE_ADDRESS_TRIES", value: "0", want: `GATEWAY_CONSOLE_ADDRESS_TRIES (--console-address-tries): "0" is not a whole number from 1 to 10000`},
	{env: "GATEWAY_TLS_CERT", value: "/some/cert.pem", want: "GATEWAY_TLS_KEY (--tls-key): set both GATEWAY_TLS_CERT and GATEWAY_TLS_KEY, or neither"},
	{env: "GATEWAY_TLS_KEY", value: "/some/key.pem", want: "GATEWAY_TLS_CERT (--tls-cert): set both"},
	{env: "GATEWAY_PPROF_ADDR", value: "0.0.0.0:6060", want: "GATEWAY_PPROF_ADDR (--pprof-addr): must be a loopback address"},
	{env: "GATEWAY_PPROF_ADDR", value: "localhost:6060", want: "must be a loopback address"},
	{env: "GATEWAY_PPROF_ADDR", value: ":6060", want: "must be a loopback address"},
	{env: "GATEWAY_PPROF_ADDR", value: "nonsense", want: `GATEWAY_PPROF_ADDR (--pprof-addr): "nonsense" is not host:port`},
	{env: "GATEWAY_LOG_LEVEL", value: "loud", want: `GATEWAY_LOG_LEVEL (--log-level): "loud" is not debug, info, warn or error`},
	{env: "GATEWAY_DEMO", value: "maybe", want: `GATEWAY_DEMO (--demo): "maybe" is not true or false`},
	{env: "GATEWAY_NO_WORKERS", value: "2", want: `GATEWAY_NO_WORKERS (--no-workers): "2" is not true or false`},
	{env: "GATEWAY_TRUSTED_PROXIES", value: "10.0.0.0/8,bogus", want: `GATEWAY_TRUSTED_PROXIES (--trusted-proxies): "bogus" is neither an IP address nor a CIDR prefix`},
	{env: "GATEWAY_TRUSTED_PROXIES", value: "10.0.0.0/33", want: `"10.0.0.0/33" is neither`},
	{env: "GATEWAY_RATE_LIMIT_RPS", value: "0", want: `GATEWAY_RATE_LIMIT_RPS (--rate-limit-rps): "0" is not a positive number or off`},
	{env: "GATEWAY_RATE_LIMIT_RPS", value: "-5", want: `"-5" is not a positive number or off`},
	{env: "GATEWAY_RATE_LIMIT_RPS", value: "NaN", want: `"NaN" is not a positive number or off`},
	{env: "GATEWAY_RATE_LIMIT_RPS", value: "Inf", want: `"Inf" is not a positive number or off`},
	{env: "GATEWAY_RATE_LIMIT_RPS", value: "many", want: `"many" is not a positive number or off`},
	{env: "GATEWAY_RATE_LIMIT_BURST", value: "1.5", want: `GATEWAY_RATE_LIMIT_BURST (--rate-limit-burst): "1.5" is not a whole number from 1 to 1000000`},
	{env: "GATEWAY_RATE_LIMIT_BURST", value: "0", want: `"0" is not a whole number from 1`},
	{env: "GATEWAY_REQUEST_TIMEOUT", value: "soon", want: `GATEWAY_REQUEST_TIMEOUT (--request-timeout): "soon" is not a positive duration such as 10s`},
	{env: "GATEWAY_REQUEST_TIMEOUT", value: "15s", want: "GATEWAY_REQUEST_TIMEOUT (--request-timeout): 15s leaves the handler 0s"},
	{env: "GATEWAY_HEADER_TIMEOUT", value: "-1s", want: `GATEWAY_HEADER_TIMEOUT (--header-timeout): "-1s" is not a positive duration`},
	{env: "GATEWAY_WRITE_RESERVE", value: "5", want: `GATEWAY_WRITE_RESERVE (--write-reserve): "5" is not a positive duration`},
	{env: "GATEWAY_BODY_IDLE_TIMEOUT", value: "soon", want: `GATEWAY_BODY_IDLE_TIMEOUT (--body-idle-timeout): "soon"`},
	{env: "GATEWAY_BODY_IDLE_TIMEOUT", value: "50s", want: "GATEWAY_BODY_IDLE_TIMEOUT (--body-idle-timeout): 50s is longer than the 45s"},
	{env: "GATEWAY_IDLE_TIMEOUT", value: "0s", want: `GATEWAY_IDLE_TIMEOUT (--idle-timeout): "0s" is not a positive duration`},
	{env: "GATEWAY_IDLE_TIMEOUT", value: "9000h", want: `"9000h" is longer than 8784h0m0s`},
	{env: "GATEWAY_HEADER_BYTES_MAX", value: "100", want: `GATEWAY_HEADER_BYTES_MAX (--header-bytes-max): "100" is not a whole number from 4096 to 524288`},
	{env: "GATEWAY_HEADER_BYTES_MAX", value: "1048576", want: `"1048576" is not a whole number from 4096 to 524288`},
	{env: "GATEWAY_CONNS_PER_CLIENT_MAX", value: "0", want: `GATEWAY_CONNS_PER_CLIENT_MAX (--conns-per-client-max): "0" is not a whole number from 1 to 100000, or off`},
	{env: "GATEWAY_CONNS_PER_CLIENT_MAX", value: "many", want: `"many" is not a whole number`},
	{env: "GATEWAY_CALLBACK_ALLOW_PRIVATE", value: "yes please", want: `GATEWAY_CALLBACK_ALLOW_PRIVATE (--callback-allow-private): "yes please" is not true or false`},
	{env: "GATEWAY_CALLBACK_ALLOW_PREFIXES", value: "10.0.0.0/33", want: `GATEWAY_CALLBACK_ALLOW_PREFIXES (--callback-allow-prefixes): "10.0.0.0/33" is neither`},
	{env: "GATEWAY_CALLBACK_ALLOW_PREFIXES", value: "example.com", want: `"example.com" is neither an IP address nor a CIDR prefix`},
	{env: "GATEWAY_LEDGER_SHARDS", value: "-1", want: `GATEWAY_LEDGER_SHARDS (--ledger-shards): "-1" is not a whole number from 0 to 1024`},
	{env: "GATEWAY_LEDGER_SHARDS", value: "two", want: `"two" is not a whole number`},
	{env: "GATEWAY_LEDGER_SHARDS", args: []string{"--ledger-shards", "100000"}, want: `--ledger-shards (GATEWAY_LEDGER_SHARDS): "100000"`},
	{env: "GATEWAY_LEDGER_BATCH_WINDOW", value: "-1ms", want: `GATEWAY_LEDGER_BATCH_WINDOW (--ledger-batch-window): "-1ms" is negative`},
	{env: "GATEWAY_LEDGER_BATCH_WINDOW", value: "soon", want: `"soon" is not a duration such as 10s or 0s`},
	{env: "GATEWAY_DB_COMMIT_TIMEOUT", value: "0s", want: `GATEWAY_DB_COMMIT_TIMEOUT (--db-commit-timeout): "0s" is not a positive duration`},
	{env: "GATEWAY_DB_PROBE_TIMEOUT", value: "-3s", want: `GATEWAY_DB_PROBE_TIMEOUT (--db-probe-timeout): "-3s" is not a positive duration`},
	{env: "GATEWAY_DB_TCP_USER_TIMEOUT", value: "5", want: `GATEWAY_DB_TCP_USER_TIMEOUT (--db-tcp-user-timeout): "5" is not a positive duration`},
	{env: "GATEWAY_SHUTDOWN_DRAIN", value: "-1s", want: `GATEWAY_SHUTDOWN_DRAIN (--shutdown-drain): "-1s" is negative`},
	{env: "GATEWAY_FX_RATE_MAX_AGE", value: "1 day", want: `GATEWAY_FX_RATE_MAX_AGE (--fx-rate-max-age): "1 day" is not a positive duration`},
	{env: "GATEWAY_FX_RATE_MAX_AGE", value: "0s", want: `"0s" is not a positive duration`},
	{env: "GATEWAY_HOLD_EXPIRY", value: "-1h", want: `GATEWAY_HOLD_EXPIRY (--hold-expiry): "-1h" is not a positive duration`},
	{env: "GATEWAY_HOLD_EXPIRY", args: []string{"--hold-expiry", "forever"}, want: `--hold-expiry (GATEWAY_HOLD_EXPIRY): "forever"`},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", args: []string{"--network-message-max", "USD:1.005"},
		want: "--network-message-max (GATEWAY_NETWORK_MESSAGE_MAX): USD 1.005: USD allows at most 2 decimals"},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "JPY:1.5", want: "GATEWAY_NETWORK_MESSAGE_MAX (--network-message-max): JPY 1.5"},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "USD:-1", want: "GATEWAY_NETWORK_MESSAGE_MAX"},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "XYZ:1", want: `"XYZ" is not a supported ISO 4217 currency code`},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "usd:1", want: `"usd" is not a supported`},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "USD:1,USD:2", want: "USD appears twice"},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "USD 1", want: "is not CUR:amount"},
	{env: "GATEWAY_NETWORK_MESSAGE_MAX", value: "USD:1,", want: "is not CUR:amount"},
	{env: "GATEWAY_NETWORK_UNMATCHED_REFUND_MAX", value: "USD:0",
		want: "GATEWAY_NETWORK_UNMATCHED_REFUND_MAX (--network-unmatched-refund-max): USD 0: must be greater than zero"},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", value: "100.01", want: `GATEWAY_NETWORK_OVER_CAPTURE_PCT (--network-over-capture-pct): "100.01" is not a percentage from 0 to 100`},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", value: "-1", want: `"-1" is not a percentage`},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", value: "1.005", want: `"1.005" is not a percentage`},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", args: []string{"--network-over-capture-pct", ""}, want: `--network-over-capture-pct (GATEWAY_NETWORK_OVER_CAPTURE_PCT): "" is not a percentage`},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", value: "20.", want: `"20." is not a percentage`},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", value: "20%", want: `"20%" is not a percentage`},
	{env: "GATEWAY_NETWORK_OVER_CAPTURE_PCT", value: "99999999999999999999", want: "is not a percentage"},
	{env: "GATEWAY_REMIT_SCREENING_DELAY", value: "fast", want: `GATEWAY_REMIT_SCREENING_DELAY (--remit-screening-delay): "fast" is not a positive duration`},
	{env: "GATEWAY_REMIT_IN_FLIGHT", value: "0", want: `GATEWAY_REMIT_IN_FLIGHT (--remit-in-flight): "0" is not a positive duration`},
	{env: "GATEWAY_RAIL_MODE", value: "auto", want: `GATEWAY_RAIL_MODE (--rail-mode): "auto" is not simulated or manual`},
	{env: "GATEWAY_RAIL_RETURN_PATTERN", value: "(", want: `GATEWAY_RAIL_RETURN_PATTERN (--rail-return-pattern): "(" is not a regular expression`},
	{env: "GATEWAY_RAIL_RETURN_REASON", value: "bad reason", want: `GATEWAY_RAIL_RETURN_REASON (--rail-return-reason): "bad reason" is not an ISO 20022 return reason code`},
	{env: "GATEWAY_REQUIRE_SANCTIONS_LIST", value: "on", want: `GATEWAY_REQUIRE_SANCTIONS_LIST (--require-sanctions-list): "on" is not true or false`},
	{env: "GATEWAY_METRICS_TOKEN", value: "short", want: "GATEWAY_METRICS_TOKEN: "},
	{env: "GATEWAY_BACKUP_REPO", value: "/nonexistent/repo", want: `GATEWAY_BACKUP_REPO (--backup-repo): "/nonexistent/repo" holds no pgbackrest.conf`},
	{env: "GATEWAY_CHECKPOINT_KEY_FILE", value: "/nonexistent/checkpoint.key", want: `GATEWAY_CHECKPOINT_KEY_FILE (--checkpoint-key-file): "/nonexistent/checkpoint.key" cannot be read: no such file or directory`},
	{env: "GATEWAY_CHECKPOINT_EVERY", value: "30s", want: `GATEWAY_CHECKPOINT_EVERY (--checkpoint-every): "30s" is shorter than 1m0s`},
	{env: "GOGC", value: "fast", want: `GOGC: "fast" is not a percentage (a whole number) or off`},
	{env: "GOMEMLIMIT", value: "150MB", want: `GOMEMLIMIT: "150MB" is not a size such as 150MiB, or off`},
}

// Every setting refuses a malformed value with an error naming its
// variable (and its flag), instead of running on a default nobody chose;
// and every setting has a case here, so a new one cannot be added without.
func TestMalformedSettingsAreRefused(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, tt := range malformed {
		covered[tt.env] = true
		t.Run(tt.env+"="+tt.value+strings.Join(tt.args, " "), func(t *testing.T) {
			env := map[string]string{}
			if tt.args == nil {
				env[tt.env] = tt.value
			}
			c, err := load(tt.args, env)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %+v, %v; want a *config.Error", c, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if ce.Env != tt.env && !strings.HasPrefix(tt.env, "GATEWAY_TLS_") {
				t.Errorf("error names %s, want %s", ce.Env, tt.env)
			}
			// A secret is never repeated in its refusal.
			if strings.Contains(err.Error(), "hunter2") || (tt.env == "GATEWAY_INTERNAL_TOKEN" && strings.Contains(err.Error(), tt.value)) {
				t.Errorf("error %q repeats a secret", err)
			}
		})
	}
	for _, v := range Variables() {
		if !covered[v] {
			t.Errorf("%s has no malformed case in this test", v)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := Default()
	got := fmt.Sprintf("%q %q %q %v %v %v %v %v %v %d %v %v %v %v %v %q %v %v", c.Addr, c.InternalAddr, c.DataDir,
		c.PlainHTTP, c.Demo, c.NoWorkers, c.LogLevel, c.FXRateMaxAge, c.HoldExpiry, c.LedgerShards, c.LedgerBatchWindow,
		c.RemitScreeningDelay, c.RemitInFlight, c.RailManual, c.RailReturnPattern, c.RailReturnReason,
		c.RateLimit, c.NetworkBounds)
	want := `"127.0.0.1:8443" "127.0.0.1:8444" "var" false false false INFO 24h0m0s 168h0m0s 0 0s 2s 10s false 0000$ "AC01" ` +
		`{200 400} {map[] 2000 map[]}`
	if got != want {
		t.Errorf("defaults\n got %s\nwant %s", got, want)
	}
	if c.Limits.RequestBudget != 60*time.Second || c.Limits.ConnsPerClientMax != 128 || c.Limits.HeaderBytesMax != 65536 {
		t.Errorf("limits %+v", c.Limits)
	}
	if c.DataKey != nil || c.InternalToken != "" || c.DatabaseURL != "" || len(c.Proxies) != 0 || c.CallbackAllow.AllowPrivate {
		t.Errorf("unset settings set: %+v", c)
	}
}

// A flag wins over its variable, a variable over the default; blank is
// unset.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"GATEWAY_ADDR": "127.0.0.1:9000", "GATEWAY_HOLD_EXPIRY": "1h", "GATEWAY_PLAIN_HTTP": "true",
		"GATEWAY_NETWORK_OVER_CAPTURE_PCT": "12.5", "GATEWAY_FX_RATE_MAX_AGE": "   ",
		"GATEWAY_NETWORK_MESSAGE_MAX":     "USD:1000000.00, JPY:150000000,KWD:0.001",
		"GATEWAY_TRUSTED_PROXIES":         " 10.0.0.0/8, 192.0.2.7 ,fd00::/8,,::ffff:10.1.2.3",
		"GATEWAY_CALLBACK_ALLOW_PREFIXES": "10.1.0.0/16, 10.2.3.4/8", "GATEWAY_RATE_LIMIT_RPS": "OFF",
		"GATEWAY_CONNS_PER_CLIENT_MAX": "off", "GATEWAY_RAIL_MODE": "manual",
	}
	c, err := load([]string{"--addr", "127.0.0.1:0", "--plain-http=false", "--network-over-capture-pct", "0", "--demo"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:0" || c.PlainHTTP || !c.Demo || c.HoldExpiry != time.Hour || c.FXRateMaxAge != 24*time.Hour {
		t.Errorf("addr %q plain %v demo %v hold %v fx %v", c.Addr, c.PlainHTTP, c.Demo, c.HoldExpiry, c.FXRateMaxAge)
	}
	if c.NetworkBounds.OverCaptureBps != network.NoOverCapture {
		t.Errorf("--network-over-capture-pct 0: %d bps, want none allowed", c.NetworkBounds.OverCaptureBps)
	}
	if fmt.Sprint(c.NetworkBounds.MessageMax) != "map[JPY:150000000 KWD:1 USD:100000000]" {
		t.Errorf("message max %v", c.NetworkBounds.MessageMax)
	}
	b, _ := json.Marshal(c.Proxies)
	if string(b) != `["10.0.0.0/8","192.0.2.7/32","fd00::/8","10.1.2.3/32"]` {
		t.Errorf("proxies %s", b)
	}
	if b, _ := json.Marshal(c.CallbackAllow.Prefixes); string(b) != `["10.1.0.0/16","10.0.0.0/8"]` {
		t.Errorf("callback prefixes %s", b)
	}
	if c.RateLimit.RPS != -1 || c.Limits.ConnsPerClientMax != -1 || !c.RailManual {
		t.Errorf("off: rps %v conns %d; manual %v", c.RateLimit.RPS, c.Limits.ConnsPerClientMax, c.RailManual)
	}
	for env, want := range map[string]Source{"GATEWAY_ADDR": SourceFlag, "GATEWAY_HOLD_EXPIRY": SourceEnv,
		"GATEWAY_FX_RATE_MAX_AGE": SourceDefault, "GATEWAY_DEMO": SourceFlag} {
		if got := c.Source(env); got != want {
			t.Errorf("%s from %s, want %s", env, got, want)
		}
	}
}

// The start-up line names every setting, and shows no secret: not the data
// key, not the internal token, not DATABASE_URL's password.
func TestAttrsMaskSecrets(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	for _, dbURL := range []string{
		"postgres://gw:hunter2@db.example:5432/gateway?sslmode=disable",
		"postgres://gw@db.example/gateway?password=hunter2&sslmode=disable",
		"host=db.example user=gw password=hunter2 dbname=gateway",
		"host=db.example user=gw password='hunter2 x' dbname=gateway",
	} {
		c, err := load([]string{"--demo"}, map[string]string{"DATABASE_URL": dbURL, "GATEWAY_DATA_KEY": key,
			"GATEWAY_INTERNAL_TOKEN": "itk_0123456789abcdef0123", "GATEWAY_HOLD_EXPIRY": "2h"})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		slog.New(slog.NewJSONHandler(&out, nil)).LogAttrs(t.Context(), slog.LevelInfo, "configuration", c.Attrs()...)
		line := out.String()
		for _, secret := range []string{"hunter2", key, "itk_0123456789abcdef0123"} {
			if strings.Contains(line, secret) {
				t.Errorf("the start-up line shows a secret %q: %s", secret, line)
			}
		}
		for _, v := range Variables() {
			if !strings.Contains(line, `"`+v+`"`) {
				t.Errorf("the start-up line does not name %s", v)
			}
		}
		for _, want := range []string{`"GATEWAY_DATA_KEY":"(set, masked)"`, `"GATEWAY_HOLD_EXPIRY":"2h"`, "db.example",
			`"from_flags":"--demo"`, `"from_env":"DATABASE_URL,GATEWAY_DATA_KEY,GATEWAY_INTERNAL_TOKEN,GATEWAY_HOLD_EXPIRY"`} {
			if !strings.Contains(line, want) {
				t.Errorf("the start-up line lacks %s: %s", want, line)
			}
		}
	}
}

// Every flag is its variable's name: GATEWAY_X_Y is --x-y, and the
// secrets have none (a flag's value shows in the process list).
func TestFlagNames(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	AddFlags(fs)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if !strings.Contains(f.Usage, "GATEWAY_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))) {
			t.Errorf("--%s: usage %q does not name its variable", f.Name, f.Usage)
		}
	})
	for _, secret := range []string{"data-key", "internal-token", "metrics-token", "database-url"} {
		if fs.Lookup(secret) != nil {
			t.Errorf("--%s exists", secret)
		}
	}
	if n != len(Variables())-10 { // the four secrets, GOGC, GOMEMLIMIT, DATABASE_READ_URL and _WAIT_MS, GATEWAY_CELLS and _READ_URLS (their URLs hold passwords)
		t.Errorf("%d flags for %d variables", n, len(Variables()))
	}
}

// The parsers never panic and accept only what they document.
func FuzzParseNetworkBounds(f *testing.F) {
	for _, s := range []string{"USD:1.00", "JPY:5,EUR:0.01", "20", "12.5", "100", "USD:", ":1", "1e9", "USD:1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := parseCurrencyAmounts(s); err == nil {
			for cur, v := range m {
				if len(cur) != 3 || v <= 0 {
					t.Fatalf("%q gave %s %d", s, cur, v)
				}
			}
		}
		if bps, err := parsePercentBps(s); err == nil && (bps < 0 || bps > 10_000) {
			t.Fatalf("%q gave %d bps", s, bps)
		}
	})
}
