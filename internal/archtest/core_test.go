package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The journal core is the journal and nothing else (issue 28, point 1;
// docs/architecture.md): merchants are internal/merchant's, the bill
// internal/bill's, cards internal/cards'. These tests hold the parts of
// that which no import rule can see.

// coreMerchantFields are what ledger.Merchant may carry: what the journal
// needs of a merchant with its head (its id, its shop number and callback
// URL for the outbox, its currencies for its accounts). The rest of a
// merchant (its whitelist, KYB tier, API version, status, …) is
// merchant.Merchant's.
var coreMerchantFields = []string{"ID", "ShopNo", "Currencies", "CallbackURL"}

func TestCoreMerchantIsWhatTheJournalNeeds(t *testing.T) {
	fields := structFields(t, parsePackage(t, "../../ledger"), "Merchant")
	if len(fields) == 0 {
		t.Fatal("no ledger.Merchant found")
	}
	for _, f := range fields {
		if !slices.Contains(coreMerchantFields, f) {
			t.Errorf("ledger.Merchant carries %s: a merchant's setting belongs to internal/merchant", f)
		}
	}
}

// The core names no card: the card domain reads a card's accounts itself
// and tells the core through its batch state (ledger.AccountKnower). The
// journal's own columns (card_no of entries, accounts and bill lines) are
// row fields, not declarations of the core's API or of Tx.
// cardWord is "card" as a word of a Go name (cardNo, QueueCardAccounts,
// CARD_X), not inside another word (discardTimeout).
var cardWord = regexp.MustCompile(`(^|[^a-z])[cC]ard|CARD`)

func TestCoreKnowsNoCard(t *testing.T) {
	files := parsePackage(t, "../../ledger")
	names := topLevelNames(files)
	names = append(names, structFields(t, files, "Tx")...)
	for _, n := range names {
		if cardWord.MatchString(n) {
			t.Errorf("the journal core declares %s: card code belongs to internal/cards", n)
		}
	}
}

// The sealing context of a merchant's signing key is spelled once, where
// it is sealed and opened (merchant.Sealer.SealSigningKey, OpenSigningKey):
// a second spelling that drifts makes every callback key fail to open.
func TestSigningKeyContextHasOneHome(t *testing.T) {
	var homes []string
	walkGo(t, "../..", func(path string, src []byte) {
		if bytes.Contains(src, []byte(`"merchant-private-key:`)) {
			homes = append(homes, filepath.ToSlash(strings.TrimPrefix(path, "../../")))
		}
	})
	if !slices.Equal(homes, []string{"internal/merchant/sealer.go"}) {
		t.Errorf("the signing key's sealing context is spelled in %q, want only internal/merchant/sealer.go", homes)
	}
}

// Sizes of the packages, in non-test lines: the core under 3,500, every
// package under 4,000. The load and fault tools (cmd/bench, cmd/chaos) are
// apart from the product. internal/console got under by giving its tables'
// SQL (internal/console/store), its password, TOTP, token and lockout
// checks (internal/console/auth) and its operator's and books' pages
// (internal/console/house, internal/console/books, behind the small host
// interface of internal/console/host).
const (
	coreLinesMax    = 3500
	packageLinesMax = 4000
)

var sizeExempt = []string{"tools/bench", "tools/chaos"}

// generated is Go's marker of a generated file (go help generate).
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func TestPackageSizes(t *testing.T) {
	files := map[string][]int{} // a package's files' non-test lines
	walkGo(t, "../..", func(path string, src []byte) {
		// The regexp only where its fixed words are: over every file it
		// cost seconds under -race (make test-short).
		if bytes.Contains(src, []byte("// Code generated ")) && generated.Match(src) {
			return // a table made by a documented command (tools/confusables) is data, not code to read
		}
		dir := filepath.ToSlash(strings.TrimPrefix(filepath.Dir(path), "../.."))
		dir = strings.TrimPrefix(dir, "/")
		files[dir] = append(files[dir], bytes.Count(src, []byte("\n")))
	})
	lines := map[string]int{}
	for dir, fs := range files {
		for _, n := range fs {
			lines[dir] += n
		}
	}
	if lines["ledger"] == 0 {
		t.Fatal("no lines counted for ledger")
	}
	t.Log("\n" + sizeTable(files, lines))
	if n := lines["ledger"]; n >= coreLinesMax {
		t.Errorf("ledger has %d non-test lines, want under %d: the journal only", n, coreLinesMax)
	}
	for dir, n := range lines {
		if n >= packageLinesMax && dir != "ledger" && !slices.Contains(sizeExempt, dir) {
			t.Errorf("%s has %d non-test lines, want under %d", dir, n, packageLinesMax)
		}
	}
}

// sizeTable is what `go test -v -run TestPackageSizes ./internal/archtest`
// prints (docs/architecture.md): every package's non-test files and lines,
// its largest file and its median, largest package first.
func sizeTable(files map[string][]int, lines map[string]int) string {
	dirs := make([]string, 0, len(lines))
	for dir := range lines {
		dirs = append(dirs, dir)
	}
	slices.SortFunc(dirs, func(a, b string) int {
		if lines[a] != lines[b] {
			return lines[b] - lines[a]
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %6s %7s %8s %7s\n", "package", "files", "lines", "largest", "median")
	for _, dir := range dirs {
		fs := slices.Sorted(slices.Values(files[dir]))
		fmt.Fprintf(&b, "%-32s %6d %7d %8d %7d\n", dir, len(fs), lines[dir], fs[len(fs)-1], fs[len(fs)/2])
	}
	return b.String()
}

// walkGo calls fn with the source of every file of goFiles(root), as
// readTree read it.
func walkGo(t *testing.T, root string, fn func(path string, src []byte)) {
	t.Helper()
	for _, sf := range readTree(t, root).files {
		fn(sf.path, sf.src)
	}
}

// parsePackage parses the non-test Go files of dir.
func parsePackage(t *testing.T, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// topLevelNames are the names a package declares at top level: types,
// functions, methods, variables and constants.
func topLevelNames(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				out = append(out, d.Name.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out = append(out, s.Name.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// structFields are the field names of the struct type name.
func structFields(t *testing.T, files []*ast.File, name string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fl := range st.Fields.List {
				for _, n := range fl.Names {
					out = append(out, n.Name)
				}
			}
			return false
		})
	}
	return out
}
