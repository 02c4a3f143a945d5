package deploytest

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// deployDir holds the files under test, from this package.
const deployDir = "../../deploy"

// unit is a systemd unit file: each section's keys with every value given
// (a key may repeat, as ReadWritePaths= does).
type unit map[string]map[string][]string

// get is the last value of section's key, as systemd applies it.
func (u unit) get(section, key string) string {
	vs := u[section][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// readUnit parses a unit file: [Section] lines, Key=Value lines, comments
// (# and ;) and blank lines. Continuation lines are not used here and are
// refused, so that a parse cannot silently differ from systemd's.
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	u := unit{}
	section := ""
	eachLine(t, path, func(n int, line string) {
		switch {
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case strings.HasSuffix(line, `\`):
			t.Fatalf("%s:%d: continuation lines are not used in deploy/", path, n)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not Key=Value inside a section: %q", path, n, line)
			}
			k = strings.TrimSpace(k)
			u[section][k] = append(u[section][k], strings.TrimSpace(v))
		}
	})
	return u
}

// readEnv parses an environment file as systemd's EnvironmentFile= does
// for the files of deploy/ (KEY=value, no quotes, no shell): a key given
// twice is refused, being certainly a mistake.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	env := map[string]string{}
	eachLine(t, path, func(n int, line string) {
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			t.Fatalf("%s:%d: not KEY=value: %q", path, n, line)
		}
		if _, dup := env[k]; dup {
			t.Fatalf("%s:%d: %s set twice", path, n, k)
		}
		if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, `'`) {
			t.Fatalf("%s:%d: %s is quoted; the files of deploy/ are read unquoted by pgaf-create", path, n, k)
		}
		env[k] = v
	})
	return env
}

// eachLine calls f with each line of path that is neither blank nor a
// comment, trimmed, and its line number.
func eachLine(t *testing.T, path string, f func(n int, line string)) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		f(n, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// environ turns an env file's map into os.Environ's form.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// needTool is the path of program; when it is missing the test skips,
// saying what still checks the files, or fails when requireEnv is set
// (a machine that must run every check).
func needTool(t *testing.T, program, requireEnv, debianPackage, instead string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	if os.Getenv(requireEnv) != "" {
		t.Fatalf("%s is missing (apt-get install %s)", program, debianPackage)
	}
	t.Skipf("%s is missing (apt-get install %s); %s", program, debianPackage, instead)
	return ""
}
