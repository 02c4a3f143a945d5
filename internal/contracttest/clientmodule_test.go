package contracttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Go client (api/client) is a module of its own, so that a merchant's
// app depends on it and nothing of the server (docs/api.md, "The Go
// client"). Two things follow, both checked here:
//
//   - the client module's tests are outside this module's `./...`, so
//     `make test` runs them from here, with its contract test (build tag
//     `contract`), which compares the client with docs/openapi.yaml through
//     this package and so needs this module beside the client's own;
//   - an app whose go.mod names only the client builds, and its build list
//     compiles the client and the decimal library, no router, driver or ORM.

// repoRoot is this module's root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goCmd runs the go command in dir, offline: every module the builds need
// is already in the module cache, because this module's own build needed it.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return run(t, dir, []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}, "go", args...)
}

// TestClientModuleTests runs the client module's tests, its contract test
// included, against a go.mod that adds this module to the client's (a
// -modfile in a temporary directory: the client's own go.mod stays free of
// the server).
func TestClientModuleTests(t *testing.T) {
	root := repoRoot(t)
	clientDir := filepath.Join(root, "api", "client")
	own, err := os.ReadFile(filepath.Join(clientDir, "go.mod"))
	if err != nil {
		t.Fatalf("the client has no go.mod of its own: %v", err)
	}
	tmp := t.TempDir()
	modfile := string(own) + "\nrequire github.com/paygate/gateway v0.0.0\n\nreplace github.com/paygate/gateway => " + root + "\n"
	writeFile(t, filepath.Join(tmp, "go.mod"), modfile)
	writeFile(t, filepath.Join(tmp, "go.sum"), readSums(t, root, clientDir))
	args := []string{"test", "-count=1", "-tags", "contract", "-modfile", filepath.Join(tmp, "go.mod")}
	if raceEnabled {
		args = append(args, "-race")
	}
	if testing.Short() {
		// The fast tier's flags (make test-short): the client's tests sized
		// for it, and test binaries linked without DWARF, a third less
		// link time for what only runs once.
		args = append(args, "-short", "-ldflags=-w -s")
	}
	out := goCmd(t, clientDir, append(args, "./...")...)
	if !strings.Contains(out, "ok  \tgithub.com/paygate/gateway/api/client\t") {
		t.Fatalf("the client's tests did not run:\n%s", out)
	}
	t.Log(out)
}

// TestAppBuildsWithOnlyTheClient builds a merchant's app whose go.mod
// requires the client alone, and checks what its build list holds.
func TestAppBuildsWithOnlyTheClient(t *testing.T) {
	root := repoRoot(t)
	clientDir := filepath.Join(root, "api", "client")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "go.mod"), "module example.com/shopapp\n\ngo 1.26\n\n"+
		"require github.com/paygate/gateway/api/client v0.0.0\n\n"+
		"replace github.com/paygate/gateway/api/client => "+clientDir+"\n")
	writeFile(t, filepath.Join(app, "go.sum"), readSums(t, clientDir))
	writeFile(t, filepath.Join(app, "main.go"), `package main

import (
	"fmt"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/api/client/receiver"
)

func main() {
	_, err := client.New(client.Config{BaseURL: "https://gw.example.com", ShopNo: "SH1", PublicKey: "pk"})
	fmt.Println(client.Version, receiver.HeaderSign, err)
}
`)
	goCmd(t, app, "build", "-o", filepath.Join(app, "shopapp"), ".")
	// The modules whose packages the app compiles (the build list also
	// names the decimal library's own test dependencies, never compiled).
	compiled := map[string]bool{}
	for _, m := range strings.Fields(goCmd(t, app, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")) {
		compiled[m] = true
	}
	want := map[string]bool{"example.com/shopapp": true, "github.com/paygate/gateway/api/client": true, "github.com/cockroachdb/apd/v3": true}
	for m := range compiled {
		if !want[m] {
			t.Errorf("an app of the client alone compiles packages of %s", m)
		}
	}
	if len(compiled) != len(want) {
		t.Errorf("compiled modules %v, want %d", compiled, len(want))
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readSums joins the go.sum files of dirs: the checksums every module of
// the build needs, so that the offline build verifies them.
func readSums(t *testing.T, dirs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range dirs {
		s, err := os.ReadFile(filepath.Join(d, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(s)
	}
	return b.String()
}
