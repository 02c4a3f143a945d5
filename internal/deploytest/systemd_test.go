package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/config"
)

// The units of deploy/systemd, as an instance of each template is named.
var units = []string{"gateway.service", "pgautofailover@node1.service", "pgautofailover@monitor.service",
	"pgbackrest-backup@full.service", "pgbackrest-backup@diff.service", "pgbackrest-full.timer", "pgbackrest-diff.timer"}

// TestSystemdUnitsVerify runs systemd-analyze verify (Debian's systemd) on
// every unit, in a root of its own: the machine's own units (for the
// targets they name), the units of deploy/systemd, and stand-ins for the
// binaries they run. Any message is a failure — systemd only warns about
// an unknown key or a malformed value and ignores it.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze := needTool(t, "systemd-analyze", "GATEWAY_TEST_REQUIRE_SYSTEMD", "systemd", "TestSystemdUnitsKeys still checks the keys")
	root := t.TempDir()
	copyDir(t, "/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/system"))
	etc := filepath.Join(root, "etc/systemd/system")
	copyDir(t, deployDir+"/systemd", etc)
	for _, bin := range []string{"usr/local/bin/gateway", "usr/bin/pg_autoctl", "usr/bin/pgbackrest"} {
		writeFile(t, filepath.Join(root, bin), "#!/bin/sh\n", 0o755)
	}
	for _, u := range units {
		if tmpl, ok := template(u); ok {
			if err := os.Symlink(tmpl, filepath.Join(etc, u)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(analyze, append([]string{"verify", "--root=" + root}, units...)...)
	cmd.Dir = etc
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// template is the template file of an instance name (a@b.service →
// a@.service).
func template(name string) (string, bool) {
	at := strings.IndexByte(name, '@')
	dot := strings.LastIndexByte(name, '.')
	if at < 0 {
		return "", false
	}
	return name[:at+1] + name[dot:], true
}

// TestSystemdUnitsKeys checks what the gateway's operation needs of the
// units, which verify cannot know: the restart policy, the stop timeout
// against the drain, the hardening, the data directory writable, the
// settings file the gateway would accept, and the backup schedule.
func TestSystemdUnitsKeys(t *testing.T) {
	gw := readUnit(t, deployDir+"/systemd/gateway.service")
	env := readEnv(t, deployDir+"/systemd/gateway.env")
	svc := gw["Service"]
	want := map[string]string{
		"Restart": "on-failure", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
		"PrivateTmp": "yes", "EnvironmentFile": "/etc/gateway/gateway.env", "RestartPreventExitStatus": "2",
		"ExecStart": "/usr/local/bin/gateway serve", "KillSignal": "SIGTERM",
	}
	for k, v := range want {
		if got := gw.get("Service", k); got != v {
			t.Errorf("gateway.service: %s=%q, want %q", k, got, v)
		}
	}
	if user := gw.get("Service", "User"); (user == "" || user == "root") && gw.get("Service", "DynamicUser") != "yes" {
		t.Errorf("gateway.service runs as %q: a named user or DynamicUser=yes", user)
	}
	if !slices.Contains(strings.Fields(strings.Join(svc["ReadWritePaths"], " ")), env["GATEWAY_DATA_DIR"]) {
		t.Errorf("gateway.service: ReadWritePaths %q lacks GATEWAY_DATA_DIR %q of gateway.env", svc["ReadWritePaths"], env["GATEWAY_DATA_DIR"])
	}

	// The settings file must start the gateway: no unknown GATEWAY_*
	// variable, every value as the gateway parses it.
	for _, u := range config.UnknownVariables(environ(env)) {
		t.Errorf("gateway.env: %s is no setting of the gateway (did you mean %q?)", u.Name, u.DidYouMean)
	}
	cfg, err := config.FromEnvironment(func(k string) string { return withCA(t, env[k]) })
	if err != nil {
		t.Fatalf("gateway.env does not load: %v", err)
	}
	// SIGKILL must not cut the drain or the requests in flight.
	stop, err := time.ParseDuration(gw.get("Service", "TimeoutStopSec"))
	if err != nil {
		t.Fatalf("gateway.service TimeoutStopSec: %v", err)
	}
	if need := cfg.ShutdownDrain + app.ShutdownTimeout + 5*time.Second; stop < need {
		t.Errorf("gateway.service TimeoutStopSec=%s is under the drain %s + in-flight %s + 5 s", stop, cfg.ShutdownDrain, app.ShutdownTimeout)
	}

	pgaf := readUnit(t, deployDir+"/systemd/pgautofailover@.service")
	for k, v := range map[string]string{"ExecStart": "/usr/bin/pg_autoctl run", "User": "postgres", "Restart": "on-failure",
		"EnvironmentFile": "/etc/pgautofailover/%i.env", "NoNewPrivileges": "yes", "ProtectSystem": "strict"} {
		if got := pgaf.get("Service", k); got != v {
			t.Errorf("pgautofailover@.service: %s=%q, want %q", k, got, v)
		}
	}

	// The backups: a full one weekly, a differential on the other days.
	for name, want := range map[string]struct{ unit, calendar string }{
		"pgbackrest-full.timer": {"pgbackrest-backup@full.service", "Sun *-*-* 01:00:00"},
		"pgbackrest-diff.timer": {"pgbackrest-backup@diff.service", "Mon..Sat *-*-* 01:00:00"},
	} {
		timer := readUnit(t, deployDir+"/systemd/"+name)
		if got := timer.get("Timer", "Unit"); got != want.unit {
			t.Errorf("%s: Unit=%q, want %q", name, got, want.unit)
		}
		if got := timer.get("Timer", "OnCalendar"); got != want.calendar {
			t.Errorf("%s: OnCalendar=%q, want %q", name, got, want.calendar)
		}
		if timer.get("Timer", "Persistent") != "true" {
			t.Errorf("%s: not Persistent: a backup missed while the machine was down would wait a day or a week", name)
		}
	}
	backup := readUnit(t, deployDir+"/systemd/pgbackrest-backup@.service")
	if got := backup.get("Service", "ExecStart"); !strings.Contains(got, "--type=%i") || !strings.HasSuffix(got, " backup") {
		t.Errorf("pgbackrest-backup@.service: ExecStart=%q does not take the type from the instance", got)
	}
}

// withCA puts a CA bundle of this machine where a DATABASE_URL of
// deploy/ names the formation's CA (sslrootcert=), which pgx reads while
// parsing the URL.
func withCA(t *testing.T, value string) string {
	t.Helper()
	const bundle = "/etc/ssl/certs/ca-certificates.crt"
	if !strings.Contains(value, "sslrootcert=") {
		return value
	}
	if _, err := os.Stat(bundle); err != nil {
		t.Skipf("no CA bundle to stand for the formation's CA: %v", err)
	}
	i := strings.Index(value, "sslrootcert=") + len("sslrootcert=")
	end := strings.IndexByte(value[i:], '&')
	if end < 0 {
		end = len(value) - i
	}
	return value[:i] + bundle + value[i+end:]
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("mkdir", "-p", to).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v: %s", from, err, out)
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
