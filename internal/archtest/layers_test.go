package archtest

import (
	"slices"
	"strings"
	"testing"
)

// The configuration is read by every operator command and by serve before
// anything is opened; it must not link the HTTP server. This holds over
// every package config links, not only its direct imports, since linking
// api through a domain would put gin and prometheus back.
func TestConfigLinksNoHTTPServer(t *testing.T) {
	for _, why := range httpDeps(listDeps(t, "internal/config")) {
		t.Error("internal/config links " + why)
	}
}

// httpPackages are what "an HTTP package" means for the configuration: the
// gateway's HTTP surfaces and the server libraries they are built on. (The
// standard net/http is linked by pgx's and go-libs' dependencies, so the
// rule is about the gateway's server, not the protocol.)
var httpPackages = []string{module + "api", module + "internal/console", module + "internal/httpserve", "github.com/gin-gonic/", "github.com/prometheus/"}

// httpDeps returns the deps that are HTTP packages.
func httpDeps(deps []string) []string {
	var out []string
	for _, d := range deps {
		if slices.ContainsFunc(httpPackages, func(p string) bool { return within(d, p) }) {
			out = append(out, d)
		}
	}
	return out
}

// within reports whether pkg is prefix or below it; a prefix ending in "/"
// is a repository, every package of which is within.
func within(pkg, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(pkg, prefix)
	}
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

// The check above sees an HTTP package among deps, or it passes whatever
// config links.
func TestHTTPDepsAreFound(t *testing.T) {
	got := httpDeps([]string{"time", module + "api", module + "api/client", module + "apidocs", "github.com/gin-gonic/gin",
		"github.com/prometheus/client_golang/prometheus", module + "internal/httplimits", "net/http"})
	want := []string{module + "api", module + "api/client", "github.com/gin-gonic/gin", "github.com/prometheus/client_golang/prometheus"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// listDeps is every package pkg (module-relative) links, standard library
// included.
func listDeps(t *testing.T, pkg string) []string {
	t.Helper()
	for _, p := range modulePackages(t) {
		if p.ImportPath == module+pkg {
			return append([]string{p.ImportPath}, p.Deps...)
		}
	}
	t.Fatalf("go list does not list %s", pkg)
	return nil
}
