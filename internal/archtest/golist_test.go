package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// modulePackage is what go list says of one package of the module.
type modulePackage struct {
	ImportPath, Name, Dir string
	GoFiles, Imports      []string
	Deps                  []string // every package it links, standard library included
}

// listed holds the module's packages, listed once per test binary: the
// import, public, layer and size tests each ran go list of their own, about
// half a second of CPU each, in the fast tier (make test-short,
// docs/architecture.md "Test tiers").
var listed struct {
	sync.Once
	pkgs []modulePackage
	err  error
}

// modulePackages lists every package of the module (tests excluded).
func modulePackages(t *testing.T) []modulePackage {
	t.Helper()
	listed.Do(func() {
		cmd := exec.Command("go", "list", "-json=ImportPath,Name,Dir,GoFiles,Imports,Deps", module+"...")
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			listed.err = &listError{err: err, stderr: stderr.String()}
			return
		}
		for dec := json.NewDecoder(bytes.NewReader(out)); ; {
			var p modulePackage
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				listed.err = err
				return
			}
			listed.pkgs = append(listed.pkgs, p)
		}
	})
	if listed.err != nil {
		t.Fatalf("go list: %v", listed.err)
	}
	if len(listed.pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(listed.pkgs))
	}
	return listed.pkgs
}

type listError struct {
	err    error
	stderr string
}

func (e *listError) Error() string { return e.err.Error() + "\n" + e.stderr }

// ofModule keeps the packages of the module among paths, module-relative.
func ofModule(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, module) {
			out = append(out, strings.TrimPrefix(p, module))
		}
	}
	return out
}
