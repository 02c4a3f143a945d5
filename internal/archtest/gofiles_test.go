package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// goFiles returns every non-test Go file under root — not in hidden
// folders, bin, var, testdata or node_modules — as paths from the working
// directory: the one walk of the source tests.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "var" ||
			d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sourceFile is one file of goFiles: its path from the working directory,
// its path from root with slashes, its bytes and its syntax tree.
type sourceFile struct {
	path, rel string
	src       []byte
	file      *ast.File
}

// sourceTree is goFiles(root) read and parsed, with the file set of the
// trees.
type sourceTree struct {
	fset  *token.FileSet
	files []sourceFile
}

// trees holds each root's sourceTree, read and parsed once per test binary
// and shared by every test that reads the source (sizes, the sealing
// context, constant-time comparisons, reasons, table owners): parsing the
// whole module under -race took about a second each time, five times over
// (make test-short, docs/architecture.md "Test tiers"). The trees are only
// read, never changed, so sharing them is safe.
var trees struct {
	sync.Mutex
	byRoot map[string]*sourceTree
}

// readTree returns root's sourceTree, reading and parsing it on first use.
func readTree(t *testing.T, root string) *sourceTree {
	t.Helper()
	trees.Lock()
	defer trees.Unlock()
	if tr, ok := trees.byRoot[root]; ok {
		return tr
	}
	tr := &sourceTree{fset: token.NewFileSet()}
	for _, path := range goFiles(t, root) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(tr.fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			t.Fatal(err)
		}
		tr.files = append(tr.files, sourceFile{path: path, rel: filepath.ToSlash(rel), src: src, file: file})
	}
	if trees.byRoot == nil {
		trees.byRoot = map[string]*sourceTree{}
	}
	trees.byRoot[root] = tr
	return tr
}

// eachGoFile calls f with every file of goFiles(root), parsed, and its path
// from root, with slashes.
func eachGoFile(t *testing.T, root string, f func(fset *token.FileSet, rel string, file *ast.File)) {
	t.Helper()
	tr := readTree(t, root)
	for _, sf := range tr.files {
		f(tr.fset, sf.rel, sf.file)
	}
}
