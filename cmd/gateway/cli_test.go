package main

// The command line a newcomer meets (issue 21, point 8) and serve's one
// configuration (issue 18, point 5), through the real commands.

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/httpserve"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	g := &gateway{t: t, env: map[string]string{}}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out := g.mustRun(args...)
		if !strings.HasPrefix(out, "gateway ") || !strings.Contains(out, "(commit ") || strings.Count(out, "\n") != 1 {
			t.Errorf("gateway %s printed %q", args[0], out)
		}
	}
	if out := g.mustRun("--help"); !strings.Contains(out, "version") {
		t.Errorf("--help does not list version:\n%s", out)
	}
	// What the build recorded is what is printed.
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/paygate/gateway", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.time", Value: "2026-11-25T06:00:00Z"},
			{Key: "vcs.modified", Value: "true"}}}
	if buildCommit != "" {
		t.Skip("built with a -X commit: the fallback would show")
	}
	for _, tt := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{bi, true, "gateway v1.2.3 (commit 0123abc, modified, 2026-11-25T06:00:00Z) go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true, "gateway (devel) (commit unknown) go1.26.8"},
		{nil, false, "gateway unknown (commit unknown) unknown"},
	} {
		if got := versionLine(tt.bi, tt.ok); got != tt.want {
			t.Errorf("versionLine = %q, want %q", got, tt.want)
		}
	}
}

// A command group alone lists its commands (exit 2, as `gateway` alone),
// with --help too (exit 0), and an unknown command of the group lists them
// on stderr.
func TestCommandGroupsListTheirCommands(t *testing.T) {
	t.Parallel()
	g := &gateway{t: t, env: map[string]string{}}
	groups := map[string][]string{}
	for _, c := range subcommands() {
		if first, _, two := strings.Cut(c.name, " "); two {
			groups[first] = append(groups[first], c.name)
		}
	}
	if len(groups) < 8 {
		t.Fatalf("groups %v", groups)
	}
	for group, cmds := range groups {
		r := g.run(group)
		if r.code() != 2 || !strings.Contains(r.err.Error(), group+" needs a command") {
			t.Errorf("gateway %s: exit %d, %v; want 2 and a message", group, r.code(), r.err)
		}
		help := g.run(group, "--help")
		if help.err != nil {
			t.Errorf("gateway %s --help: %v", group, help.err)
		}
		bad := g.run(group, "frobnicate")
		if bad.code() != 2 || !strings.Contains(bad.err.Error(), `"`+group+` frobnicate"`) {
			t.Errorf("gateway %s frobnicate: exit %d, %v", group, bad.code(), bad.err)
		}
		for _, out := range []string{r.stdout, help.stdout, bad.stderr} {
			if !strings.Contains(out, "usage: gateway "+group+" <command>") {
				t.Errorf("gateway %s: no usage line in %q", group, out)
			}
			for _, c := range cmds {
				if !strings.Contains(out, "  "+c+" ") {
					t.Errorf("gateway %s does not list %q:\n%s", group, c, out)
				}
			}
			if strings.Contains(out, "serve") {
				t.Errorf("gateway %s lists other groups' commands:\n%s", group, out)
			}
		}
	}
}

// An unknown flag is reported once: the usage, then the error, not the
// flag package's report besides.
func TestUnknownFlagReportedOnce(t *testing.T) {
	t.Parallel()
	g := &gateway{t: t, env: map[string]string{}}
	for _, args := range [][]string{{"merchant", "deposit", "--no-such-flag"}, {"serve", "--no-such-flag"}, {"audit", "verify", "-bogus"}} {
		r := g.run(args...)
		if r.code() != 2 {
			t.Errorf("gateway %s: exit %d, want 2", strings.Join(args, " "), r.code())
			continue
		}
		all := r.stdout + r.stderr + r.err.Error()
		if n := strings.Count(all, "flag provided but not defined"); n != 1 {
			t.Errorf("gateway %s: the unknown flag reported %d times:\n%s", strings.Join(args, " "), n, all)
		}
		if !strings.Contains(r.stderr, "usage: gateway "+args[0]) {
			t.Errorf("gateway %s: no usage on stderr:\n%s", strings.Join(args, " "), r.stderr)
		}
	}
}

// rail settle --help shows settle's flags only: a settlement has no
// reason; a return has one.
func TestRailHelpShowsOwnFlags(t *testing.T) {
	t.Parallel()
	g := &gateway{t: t, env: map[string]string{}}
	settle := g.run("rail", "settle", "--help")
	ret := g.run("rail", "return", "--help")
	if settle.err != nil || ret.err != nil {
		t.Fatalf("--help: %v, %v", settle.err, ret.err)
	}
	if strings.Contains(settle.stderr, "-reason") || !strings.Contains(settle.stderr, "-tx-id") {
		t.Errorf("rail settle --help:\n%s", settle.stderr)
	}
	if !strings.Contains(ret.stderr, "-reason") {
		t.Errorf("rail return --help:\n%s", ret.stderr)
	}
	if r := g.run("rail", "settle", "--tx-id", "rmt_x", "--reason", "AC01"); r.code() != 2 {
		t.Errorf("rail settle --reason: exit %d, want 2 (no such flag)", r.code())
	}
}

// The operator reads a merchant under the names the merchant reads it:
// every field of GET /shop/account is in `merchant show`, with the same
// value, and the operator's own settings besides.
func TestOperatorProfileIsTheAccount(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createMerchant("Names shop", "USD,EUR")
	g.deposit(c.ShopNo, "USD", "12.34")
	s := g.serve()
	status, env := shopGet(t, s, c.ShopNo, c.PublicKey, "/shop/account")
	if status != 200 {
		t.Fatalf("/shop/account: %d %v", status, env)
	}
	account := env["data"].(map[string]any)
	var shown map[string]any
	if err := json.Unmarshal([]byte(g.mustRun("merchant", "show", "--shop-no", c.ShopNo)), &shown); err != nil {
		t.Fatal(err)
	}
	s.mustStop()
	for k, v := range account {
		got, ok := shown[k]
		switch {
		case !ok:
			t.Errorf("merchant show lacks %q", k)
		case k == "lastAuthenticatedAt":
			// The API call itself authenticated.
		case !reflect.DeepEqual(got, v):
			t.Errorf("%s: merchant show %v, /shop/account %v", k, got, v)
		}
	}
	for _, k := range []string{"ipWhitelist", "callbackUrl"} {
		if _, ok := shown[k]; !ok {
			t.Errorf("merchant show lacks the operator's %q", k)
		}
	}
	// The same type: a field added to the answer reaches the command.
	fields := reflect.VisibleFields(reflect.TypeFor[api.AccountView]())
	if len(fields) != len(account) {
		t.Errorf("api.AccountView has %d fields, /shop/account answered %d", len(fields), len(account))
	}
}

// serve refuses a malformed setting before it opens anything: exit 2 and a
// message naming the variable and its flag (every setting's refusal is
// internal/config's TestMalformedSettingsAreRefused).
func TestServeRefusesMalformedSettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"GATEWAY_HOLD_EXPIRY": "a week"}, nil, `GATEWAY_HOLD_EXPIRY (--hold-expiry): "a week" is not a positive duration`},
		{map[string]string{"GATEWAY_REMIT_IN_FLIGHT": "-1s"}, nil, `GATEWAY_REMIT_IN_FLIGHT (--remit-in-flight): "-1s"`},
		{map[string]string{"GATEWAY_LEDGER_SHARDS": "0x10"}, nil, `GATEWAY_LEDGER_SHARDS (--ledger-shards): "0x10"`},
		{nil, []string{"--ledger-shards", "-2"}, `--ledger-shards (GATEWAY_LEDGER_SHARDS): "-2"`},
		{map[string]string{"GATEWAY_DEMO": "yes"}, nil, `GATEWAY_DEMO (--demo): "yes" is not true or false`},
		{map[string]string{"GATEWAY_LOG_LEVEL": "chatty"}, nil, `GATEWAY_LOG_LEVEL (--log-level)`},
		{map[string]string{"GATEWAY_DATA_KEY": "00"}, nil, "GATEWAY_DATA_KEY: must be 64 hex digits"},
		{map[string]string{"DATABASE_URL": "postgres://gw:hunter2@db:notaport/x"}, nil, "DATABASE_URL: is not a PostgreSQL URL"},
	} {
		// No database: the refusal must come before anything is opened.
		g := &gateway{t: t, env: map[string]string{"GATEWAY_DATA_DIR": t.TempDir()}}
		for k, v := range tt.env {
			g.env[k] = v
		}
		r := g.run(append([]string{"serve"}, tt.args...)...)
		if r.code() != 2 || !strings.Contains(r.err.Error(), tt.want) {
			t.Errorf("serve %v %v: exit %d, %v; want 2 and %q", tt.env, tt.args, r.code(), r.err, tt.want)
		}
		if strings.Contains(r.stdout+r.stderr+r.err.Error(), "hunter2") {
			t.Errorf("a password is shown: %v", r.err)
		}
	}
	// The operator's commands read the same configuration.
	g := &gateway{t: t, env: map[string]string{"GATEWAY_CALLBACK_ALLOW_PREFIXES": "10.0.0.0/33"}}
	if r := g.run("merchant", "show", "--shop-no", "SH0000000001"); r.code() != 2 || !strings.Contains(r.err.Error(), "GATEWAY_CALLBACK_ALLOW_PREFIXES") {
		t.Errorf("merchant show with a malformed setting: exit %d, %v", r.code(), r.err)
	}
}

// serve logs its configuration once at start, secrets masked, and the
// internal listener's /healthz reports the workers.
func TestServeLogsConfigurationAndWorkerHealth(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	key := strings.Repeat("5a", 32)
	g.env["GATEWAY_DATA_KEY"] = key
	g.env["GATEWAY_INTERNAL_TOKEN"] = "itk_secret_token_for_this_test"
	g.env["GATEWAY_HOLD_EXPIRY"] = "90m"
	g.env["GATEWAY_LOG_LEVEL"] = "info"
	s := g.serve("--rate-limit-rps", "75")
	internal := s.internalAddr()
	resp, err := s.client.Get(s.scheme + "://" + internal + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var health struct {
		Status  string                   `json:"status"`
		Workers []httpserve.WorkerHealth `json:"workers"`
	}
	if err := json.Unmarshal(body, &health); err != nil || resp.StatusCode != http.StatusOK || health.Status != "ok" {
		t.Fatalf("internal /healthz: %d %s", resp.StatusCode, body)
	}
	var names []string
	for _, w := range health.Workers {
		names = append(names, w.Name)
		if !w.Running {
			t.Errorf("worker %s not running: %s", w.Name, body)
		}
	}
	if want := []string{"hold-expiry", "remittances", "callbacks", "idempotency-prune"}; !slices.Equal(names, want) {
		t.Errorf("workers %v, want %v", names, want)
	}
	s.mustStop()

	var line map[string]any
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"configuration"`) {
			if line != nil {
				t.Error("the configuration is logged twice")
			}
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line == nil {
		t.Fatalf("no configuration line in\n%s", s.stderr)
	}
	settings := line["settings"].(map[string]any)
	if settings["GATEWAY_HOLD_EXPIRY"] != "90m" || settings["GATEWAY_RATE_LIMIT_RPS"] != "75" ||
		settings["GATEWAY_DATA_KEY"] != "(set, masked)" || settings["GATEWAY_INTERNAL_TOKEN"] != "(set, masked)" {
		t.Errorf("configuration line %v", line)
	}
	if !strings.Contains(line["from_flags"].(string), "--rate-limit-rps") {
		t.Errorf("from_flags %v", line["from_flags"])
	}
	all := s.stdout.String() + s.stderr.String()
	for _, secret := range []string{key, "itk_secret_token_for_this_test"} {
		if strings.Contains(all, secret) {
			t.Errorf("serve's output shows the secret %q", secret)
		}
	}

	// Without workers, /healthz says nothing of them.
	g.env["GATEWAY_NO_WORKERS"] = "true"
	s = g.serve()
	resp, err = s.client.Get(s.scheme + "://" + s.internalAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `{"status":"ok"}` {
		t.Errorf("internal /healthz without workers: %s", body)
	}
	s.mustStop()
}
