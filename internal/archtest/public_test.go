package archtest

import (
	"slices"
	"strings"
	"testing"
)

// merchantFacing are the packages merchants import: the typed client, the
// reference receiver and its signature format. They are the module's public
// API, kept stable, and they link nothing of the module but each other.
var merchantFacing = []string{"api/client", "api/client/receiver", "api/client/receiver/signature"}

// publicByLayout are outside internal/ only because the design card lays
// the tree out so (docs/architecture.md, "Public packages"). Merchants do
// not import them and nothing promises their API stays; a new package
// outside internal/ fails TestPublicPackagesArePlaced until it is one or
// the other.
var publicByLayout = []string{"api", "api/partner", "api/views", "ledger", "ledger/pgcluster", "ledger/pgtest", "postings", "reconcile", "sql"}

// pkgInfo is what go list says of one package of the module.
type pkgInfo struct {
	name string   // the package clause: main for a command
	deps []string // every package it links, of the module, module-relative
}

// listModule lists every package of the module with its name and deps.
func listModule(t *testing.T) map[string]pkgInfo {
	t.Helper()
	pkgs := map[string]pkgInfo{}
	for _, p := range modulePackages(t) {
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = pkgInfo{name: p.Name, deps: ofModule(p.Deps)}
	}
	return pkgs
}

func TestPublicPackagesArePlaced(t *testing.T) {
	for _, why := range publicProblems(listModule(t)) {
		t.Error(why)
	}
}

// publicProblems finds a library outside internal/ that is neither
// merchant-facing nor public by layout, and a merchant-facing package that
// links any package of the module that is not merchant-facing.
func publicProblems(pkgs map[string]pkgInfo) []string {
	var out []string
	for pkg, info := range pkgs {
		if info.name == "main" || isInternal(pkg) {
			continue
		}
		switch {
		case slices.Contains(merchantFacing, pkg):
			for _, d := range info.deps {
				if !slices.Contains(merchantFacing, d) {
					out = append(out, pkg+" is merchant-facing but links "+d)
				}
			}
		case !slices.Contains(publicByLayout, pkg):
			out = append(out, pkg+" is public but neither merchant-facing nor public by layout (internal/archtest public_test.go, docs/architecture.md)")
		}
	}
	slices.Sort(out)
	return out
}

// isInternal reports a package Go's internal rule hides from other modules.
func isInternal(pkg string) bool {
	return strings.HasPrefix(pkg, "internal/") || strings.Contains(pkg, "/internal/") || strings.HasSuffix(pkg, "/internal")
}

// The check finds each problem, or the test above passes whatever the tree
// is.
func TestPublicProblemsAreFound(t *testing.T) {
	got := publicProblems(map[string]pkgInfo{
		"api/client":                    {name: "client", deps: []string{"api/client/receiver", "api/client/receiver/signature", "internal/netclient"}},
		"api/client/receiver":           {name: "receiver", deps: []string{"api/client/receiver/signature"}},
		"api/client/receiver/signature": {name: "signature"},
		"ledger":                        {name: "ledger", deps: []string{"postings"}},
		"webhook":                       {name: "webhook"},
		"tools/internal/harness":        {name: "harness", deps: []string{"ledger"}},
		"cmd/gateway":                   {name: "main", deps: []string{"internal/app"}},
	})
	want := []string{"api/client is merchant-facing but links internal/netclient",
		"webhook is public but neither merchant-facing nor public by layout (internal/archtest public_test.go, docs/architecture.md)"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The load and fault tools sit apart from the product: no package outside
// tools/ imports one under it (tools/internal is also closed to the rest
// of the module by Go's internal rule; this holds for whatever is added to
// tools/ beside it).
func TestProductImportsNoTool(t *testing.T) {
	for _, why := range toolImports(moduleGraph(t)) {
		t.Error(why)
	}
}

func toolImports(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		if strings.HasPrefix(pkg, "tools/") {
			continue
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, "tools/") {
				out = append(out, pkg+" imports the tool "+imp)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestToolImportsAreFound(t *testing.T) {
	got := toolImports(map[string][]string{
		"tools/bench":     {"tools/internal/harness", "ledger"},
		"internal/app":    {"ledger", "tools/loadgen"},
		"tools/loadgen":   {"api/client"},
		"cmd/gateway":     {"internal/app"},
		"internal/tooled": {"internal/toolsy"},
	})
	if want := []string{"internal/app imports the tool tools/loadgen"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
