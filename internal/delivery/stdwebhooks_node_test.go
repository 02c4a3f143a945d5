package delivery_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The npm reference libraries of Standard Webhooks (standardwebhooks and
// svix), pinned in testdata/stdwebhooks/package.json and its lock file,
// verify what the gateway really sent: a library we did not write is the
// judge of whether merchants can verify our callbacks off the shelf.

// stdwebhooksDir holds package.json, package-lock.json and verify.js.
const stdwebhooksDir = "testdata/stdwebhooks"

// nodeCase is one captured request as the libraries take it.
type nodeCase struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Secret  string            `json:"secret"`
}

// nodeVerdict is what each library said: true, or its error message.
type nodeVerdict struct {
	StandardWebhooks any `json:"standardwebhooks"`
	Svix             any `json:"svix"`
}

func (v nodeVerdict) accepted() (std, svix bool) {
	return v.StandardWebhooks == true, v.Svix == true
}

// npm ci runs once per test binary; its outcome is kept for every caller.
var (
	npmCI    sync.Once
	npmCIErr error
	npmCIOut []byte
)

// verifyWithNode runs verify.js on the cases. It skips under -short and when
// node or npm is missing (make test provides both); node_modules is
// installed with `npm ci` from the committed lock file when absent.
func verifyWithNode(t *testing.T, cases []nodeCase) []nodeVerdict {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the npm Standard Webhooks libraries are not run (make test runs them)")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv("GATEWAY_TEST_REQUIRE_NODE") != "" {
			t.Fatal("node or npm is not installed, and GATEWAY_TEST_REQUIRE_NODE is set")
		}
		t.Skip("node or npm is not installed: the npm Standard Webhooks libraries cannot run (make test needs them)")
	}
	npmCI.Do(func() {
		if _, err := os.Stat(filepath.Join(stdwebhooksDir, "node_modules")); err == nil {
			return
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = stdwebhooksDir
		npmCIOut, npmCIErr = cmd.CombinedOutput()
	})
	if npmCIErr != nil {
		t.Fatalf("npm ci in %s: %v\n%s", stdwebhooksDir, npmCIErr, npmCIOut)
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "verify.js")
	cmd.Dir = stdwebhooksDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.js: %v\n%s", err, stderr.String())
	}
	var verdicts []nodeVerdict
	if err := json.Unmarshal(out, &verdicts); err != nil || len(verdicts) != len(cases) {
		t.Fatalf("node verify.js answered %q (%v)", out, err)
	}
	return verdicts
}
