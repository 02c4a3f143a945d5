package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/config"
)

// No test listens on a fixed port (issue 28 point 6): every listener takes
// port 0 and reads back the port it got, so that tests run in parallel, on
// a busy machine, and beside the user's own `make run` (which holds 8443,
// 8444 and 8445). TestServeReadsTheBillFromTheStandby once left the
// console at its default 8445 and failed whenever that was taken.
//
// The rule, over every _test.go file and the test-support packages below:
//   - no string literal is a listen address with a port other than 0
//     ("127.0.0.1:8443", ":6060", "GATEWAY_ADDR=[::1]:8443");
//   - no Port field of a composite literal is a non-zero number;
//   - an environment written out for the gateway (a map or a list of
//     NAME=value) that sets one of its listener addresses sets them all:
//     the one it forgets binds its fixed default. (cmd/gateway's helper
//     fills in 127.0.0.1:0 for each one a test leaves unset, so an
//     environment there may also name none.)
//
// A port a test needs to know before the server starts (PostgreSQL's, in
// internal/pgha) comes from a free-port finder, never a literal.

// portSupport are the non-test files that start servers for tests.
var portSupport = []string{
	"internal/gatewaytest", "internal/sim", "internal/contracttest", "tools/internal/harness",
	"ledger/pgtest", "internal/pgha/pghatest", "api/apitest",
}

// portAllowed are the files whose fixed ports are never listened on, with
// the reason.
var portAllowed = map[string]string{
	// Parses settings and checks their defaults and errors; starts nothing.
	"internal/config/config_test.go": "settings parsed, never listened on",
	// Addresses startPprof must refuse before it listens.
	"internal/app/pprof_test.go": "addresses refused before any listener",
	// Callback targets judged by the submission and connect rules; the
	// test's dialer resolves and refuses them, and nothing listens.
	"internal/callbackurl/names_test.go": "callback targets judged, never listened on",
}

func TestNoTestListensOnAFixedPort(t *testing.T) {
	for _, why := range fixedPorts(t, "../..", listenerSettings(t)) {
		t.Error(why)
	}
}

// listenerSettings are the gateway's settings whose default is a listen
// address with a fixed port, from internal/config's defaults.
func listenerSettings(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, a := range config.Default().Attrs() {
		if a.Value.Kind() != slog.KindGroup {
			continue // from_env, from_flags
		}
		for _, s := range a.Value.Group() {
			if _, p, err := net.SplitHostPort(s.Value.String()); err == nil && p != "0" {
				out = append(out, s.Key)
			}
		}
	}
	if len(out) < 3 {
		t.Fatalf("found only %v among the settings with a fixed default port", out)
	}
	return out
}

// fixedPorts walks the test code under root and returns every breach of
// the rule, as file:line: what.
func fixedPorts(t *testing.T, root string, listeners []string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "var" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || portAllowed[rel] != "" ||
			(!strings.HasSuffix(path, "_test.go") && !slices.Contains(portSupport, filepath.ToSlash(filepath.Dir(rel)))) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		out = append(out, fixedPortsIn(fset, f, listeners)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// listenAddr is host:port with a host a test listens on: none, loopback or
// unspecified. (A peer's address, "192.0.2.1:5000" as a RemoteAddr, is no
// listener.)
var listenAddr = regexp.MustCompile(`^(?:[A-Z_]+=)?(?:|localhost|127\.[0-9.]+|0\.0\.0\.0|\[::1?\]):([0-9]{1,5})$`)

func fixedPortsIn(fset *token.FileSet, f *ast.File, listeners []string) []string {
	var out []string
	report := func(n ast.Node, what string) { out = append(out, fset.Position(n.Pos()).String()+": "+what) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, ok := stringValue(n); ok {
				if m := listenAddr.FindStringSubmatch(s); m != nil && isFixedPort(m[1]) {
					report(n, strconv.Quote(s)+" is a fixed port: listen on port 0 and read the port back")
				}
			}
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Port" {
				if b, ok := n.Value.(*ast.BasicLit); ok && b.Kind == token.INT && b.Value != "0" {
					report(n, "Port: "+b.Value+" is a fixed port: take a free one")
				}
			}
		case *ast.CompositeLit:
			named := envNames(n)
			var missing []string
			for _, l := range listeners {
				if !slices.Contains(named, l) {
					missing = append(missing, l)
				}
			}
			if len(missing) > 0 && len(missing) < len(listeners) {
				report(n, "an environment that sets some listener addresses leaves "+strings.Join(missing, ", ")+
					" at its fixed default port: set it to 127.0.0.1:0 (or off)")
			}
		}
		return true
	})
	return out
}

func isFixedPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n <= 65535 // 99999 is a test of a refused setting, not a port
}

// envNames are the variables an environment literal sets: the string keys
// of a map, and the NAME of "NAME=value" elements (or of "NAME=" + value).
func envNames(c *ast.CompositeLit) []string {
	var out []string
	for _, el := range c.Elts {
		e := el
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if s, ok := stringValue(kv.Key); ok {
				out = append(out, s)
			}
			continue
		}
		if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			e = b.X
		}
		if s, ok := stringValue(e); ok {
			if name, _, found := strings.Cut(s, "="); found {
				out = append(out, name)
			}
		}
	}
	return out
}

func stringValue(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// The check finds each form, and passes port 0, "off", URLs and numbers
// that are no port; or the test above passes whatever the code says.
func TestFixedPortsAreFound(t *testing.T) {
	src := `package x
var (
	a = net.Listen("tcp", "127.0.0.1:8443")
	b = http.Server{Addr: ":6060"}
	c = pgcluster.Options{Port: 5432}
	d = map[string]string{"GATEWAY_ADDR": "127.0.0.1:0", "GATEWAY_INTERNAL_ADDR": "127.0.0.1:0"}
	e = []string{"GATEWAY_ADDR=" + addr, "GATEWAY_CONSOLE_ADDR=[::1]:8445"}

	ok1 = net.Listen("tcp", "127.0.0.1:0")
	ok2 = map[string]string{"GATEWAY_ADDR": "127.0.0.1:0", "GATEWAY_INTERNAL_ADDR": "127.0.0.1:0", "GATEWAY_CONSOLE_ADDR": "off"}
	ok3 = []string{"http://127.0.0.1:8080/hooks", "127.0.0.1:99999", "10:30", "192.0.2.1:5000", "GATEWAY_LOG_LEVEL=warn"}
	ok4 = pgcluster.Options{Port: ports[0]}
)`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := fixedPortsIn(fset, f, []string{"GATEWAY_ADDR", "GATEWAY_INTERNAL_ADDR", "GATEWAY_CONSOLE_ADDR"})
	want := []string{
		`x.go:3:24: "127.0.0.1:8443" is a fixed port`,
		`x.go:4:24: ":6060" is a fixed port`,
		`x.go:5:24: Port: 5432 is a fixed port`,
		`x.go:6:6: an environment that sets some listener addresses leaves GATEWAY_CONSOLE_ADDR at`,
		`x.go:7:6: an environment that sets some listener addresses leaves GATEWAY_INTERNAL_ADDR at`,
		`x.go:7:39: "GATEWAY_CONSOLE_ADDR=[::1]:8445" is a fixed port`,
	}
	if len(got) != len(want) {
		t.Fatalf("found %d, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d: %s\nwant it to start with %s", i, got[i], want[i])
		}
	}
}
