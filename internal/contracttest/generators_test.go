package contracttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Merchants generate clients from the OpenAPI documents; these tests run
// the generators they use, pinned, on both documents and compile what they
// write, so that a schema form a generator refuses (a type list such as
// `type: [number, string]` made oapi-codegen fail) breaks make test, not a
// merchant's build. docs/api.md, "Generating a client", names the tools.
//
// openapi-python-client is not run: PyPI cannot be reached from these
// machines; the forms it refuses are those oapi-codegen refuses.

const (
	oapiCodegen        = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	oapiRuntimeVersion = "v1.9.0"
)

var documents = []string{"openapi.yaml", "openapi-internal.yaml"}

// oapiConfig is the generator's configuration a merchant would write:
// models and a client; every schema kept (the callbacks' are used only by
// the document's webhooks); enum constants prefixed with their type, since
// an enum value (remittance.status) and a schema (RemittanceStatus) share
// a name.
const oapiConfig = `package: gen
generate:
  models: true
  client: true
output-options:
  skip-prune: true
compatibility:
  always-prefix-enum-values: true
output: gen/gen.go
`

// TestOapiCodegenGeneratesACompilingClient: oapi-codegen's Go client of
// each document builds.
func TestOapiCodegenGeneratesACompilingClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generators are not run (make test runs them)")
	}
	root := repoRoot(t)
	for _, doc := range documents {
		t.Run(doc, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/generated\n\ngo 1.26\n\n"+
				"require github.com/oapi-codegen/runtime "+oapiRuntimeVersion+"\n")
			writeFile(t, filepath.Join(dir, "oapi.yaml"), oapiConfig)
			if err := os.Mkdir(filepath.Join(dir, "gen"), 0o755); err != nil {
				t.Fatal(err)
			}
			// The generator and the runtime come from the module proxy, as
			// for a merchant; the build cache keeps the generator after the
			// first run.
			run(t, dir, nil, "go", "run", oapiCodegen, "-config", "oapi.yaml", filepath.Join(root, "docs", doc))
			run(t, dir, []string{"GOFLAGS=-mod=mod"}, "go", "build", "./gen/")
		})
	}
}

// npmInstall installs the pinned openapi-typescript and tsc once per test
// binary, from the committed lock file.
var (
	npmOnce sync.Once
	npmErr  error
	npmOut  []byte
)

// TestOpenapiTypescriptGeneratesCompilingTypes: openapi-typescript's types
// of each document compile under tsc --strict, with a use of them.
func TestOpenapiTypescriptGeneratesCompilingTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generators are not run (make test runs them)")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("GATEWAY_TEST_REQUIRE_NODE") != "" {
			t.Fatal("node or npm is not installed, and GATEWAY_TEST_REQUIRE_NODE is set")
		}
		t.Skip("node or npm is not installed (make test installs them)")
	}
	tools, err := filepath.Abs(filepath.Join("testdata", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(tools, "node_modules", ".bin", "tsc")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = tools
		npmOut, npmErr = cmd.CombinedOutput()
	})
	if npmErr != nil {
		t.Fatalf("npm ci in %s: %v\n%s", tools, npmErr, npmOut)
	}
	bin := filepath.Join(tools, "node_modules", ".bin")
	root := repoRoot(t)
	for _, doc := range documents {
		t.Run(doc, func(t *testing.T) {
			dir := t.TempDir()
			run(t, dir, nil, filepath.Join(bin, "openapi-typescript"), filepath.Join(root, "docs", doc), "-o", "api.d.ts")
			writeFile(t, filepath.Join(dir, "use.ts"), `import type { components, paths } from "./api";
export type Schemas = components["schemas"];
export type Paths = keyof paths;
const amount: components["schemas"]["AmountInput"] = "12.50";
export { amount };
`)
			run(t, dir, nil, filepath.Join(bin, "tsc"), "--strict", "--noEmit", "--target", "es2022", "--moduleResolution", "bundler",
				"--module", "es2022", "api.d.ts", "use.ts")
		})
	}
}

// run runs name with args in dir, env added to the test's, and returns its
// output; it fails the test with the output when the command fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}
