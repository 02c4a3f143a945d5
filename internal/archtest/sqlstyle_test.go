package archtest

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// One SQL style (docs/architecture.md, "One SQL style"): a domain's SQL is
// bun's NewRaw(…).Scan/Exec with bind parameters, or the writer's pgx
// statements; database/sql is imported for its types only. This test
// type-checks every non-test package of the module and fails on a call of
// database/sql's query methods — Query, QueryRow, Exec, Prepare and their
// …Context forms — on *sql.DB, *sql.Tx, *sql.Conn
// or *sql.Stmt, and on the same pass-through methods of bun's DB, Tx, Conn
// and IDB (a rows.Next loop through bun is database/sql's style all the
// same), outside the folders and functions below, each with its reason.
// The types decide, not the names: bun's own query builders have an Exec
// too, and they are the chosen style.

// sqlStyleFree are the folders that talk to a PostgreSQL server rather
// than to a domain's table: the cluster and HA tooling and the tools.
var sqlStyleFree = map[string]string{
	"ledger/pgcluster": "starts and stops PostgreSQL servers; its SQL is the server's administration",
	"ledger/pgtest":    "test databases: creates, clones and drops them, as an operator in psql would",
	"internal/pgha":    "the synchronous pair and the formation: replication slots, promotion, backups",
	"cmd/ha":           "the HA commands, on the same server administration as internal/pgha",
	"tools":            "the load and fault tools check the database from outside (TestProductImportsNoTool)",
}

// sqlStyleAllowed are the functions that keep a database/sql method, keyed
// by package and function (a method as Type.Method), with the reason.
var sqlStyleAllowed = map[string]string{
	"internal/remittance Service.SanctionsList": "streams the whole sanctions list row by row into screening's " +
		"index: a bun Scan would hold every row in a slice first",
	"reconcile CreateAuditor": "creates the auditor role with statements that take no bind parameters " +
		"(CREATE ROLE, GRANT), on the pool of a command that has no bun",
	"internal/database registeredMigrations": "runs each migration file as written, with no placeholder processing: bun's " +
		"formatter would read a ? of the SQL as a parameter",
	"internal/opsmetrics Read": "reads the server's own state (pg_is_in_recovery, pg_stat_archiver) on the *sql.DB " +
		"the app hands it; it imports nothing of the module, bun included",
	"internal/opsmetrics State.readStandbys": "reads pg_stat_replication, as Read does",

	// Found when this test was written, outside what the document listed:
	// each is to be written with NewRaw(…).Scan (issue 28 point 2, open).
	"internal/audit Service.Checkpoint":            toConvert,
	"internal/delivery Store.Backlog":              toConvert,
	"internal/network Service.HoldBacklog":         toConvert,
	"internal/remittance Service.Backlog":          toConvert,
	"internal/remittance Service.replaceSanctions": toConvert,
	"reconcile Records.RunByFile":                  toConvert,
	"reconcile Records.Claims":                     toConvert,
	"reconcile Records.Record":                     toConvert,
}

// toConvert marks a query method this test found in a package whose owner
// converts it: the list shrinks, it does not grow.
const toConvert = "a database/sql-style call found by this test; to be written with bun's NewRaw (issue 28 point 2, open)"

func TestSQLStyleIsBun(t *testing.T) {
	used := map[string]bool{}
	for _, c := range databaseSQLCalls(t, "../..") {
		key := c.pkg + " " + c.fn
		if _, ok := sqlStyleAllowed[key]; ok {
			used[key] = true
			continue
		}
		t.Errorf("%s: %s calls %s: write it with bun's NewRaw(…).Scan/Exec (docs/architecture.md, \"One SQL "+
			"style\"), or, if it must stay, add %q to sqlStyleAllowed with the reason", c.pos, key, c.call, key)
	}
	for key, why := range sqlStyleAllowed {
		if !used[key] {
			t.Errorf("sqlStyleAllowed: %q matches no call any more; remove it", key)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("sqlStyleAllowed: %q has no reason", key)
		}
	}
}

// The finder must tell database/sql's methods from bun's builders by type.
func TestDatabaseSQLCallsAreFound(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	write("go.mod", strings.Replace(string(gomod), "module github.com/paygate/gateway", "module example.com/m", 1))
	if sum, err := os.ReadFile("../../go.sum"); err == nil {
		write("go.sum", string(sum))
	}
	write("internal/p/p.go", `package p

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"
)

type store struct{ db *sql.DB }

func (s *store) Raw(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, "delete from t") // found
	return err
}

func Tx(ctx context.Context, tx *sql.Tx) { _ = tx.QueryRowContext(ctx, "select 1") } // found

func Through(ctx context.Context, db bun.IDB) { _, _ = db.QueryContext(ctx, "select 1") } // found

func Embedded(ctx context.Context, db *bun.DB) { _, _ = db.DB.Exec("select 1") } // found

func Builder(ctx context.Context, db bun.IDB) error {
	var n int
	_, _ = db.NewRaw("delete from t where id = ?", 1).Exec(ctx) // bun: not found
	return db.NewRaw("select 1").Scan(ctx, &n)                // bun: not found
}

func Types() error { return sql.ErrNoRows } // a type only: not found
`)
	write("tools/x/x.go", `package x

import "database/sql"

func Free(db *sql.DB) { _, _ = db.Exec("select 1") } // a tool: free
`)
	var got []string
	for _, c := range databaseSQLCalls(t, dir) {
		got = append(got, c.pkg+" "+c.fn+" "+c.call)
	}
	sort.Strings(got)
	want := []string{
		"internal/p Embedded sql.DB.Exec",
		"internal/p Through bun.IDB.QueryContext",
		"internal/p Tx sql.Tx.QueryRowContext",
		"internal/p store.Raw sql.DB.ExecContext",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("databaseSQLCalls found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// sqlMethods are the query methods of database/sql's handles and the ones
// bun's handles pass through to them.
var sqlMethods = map[string]map[string]bool{
	"database/sql": setOf("Query", "QueryContext", "QueryRow", "QueryRowContext", "Exec", "ExecContext",
		"Prepare", "PrepareContext"),
	"github.com/uptrace/bun": setOf("QueryContext", "QueryRowContext", "ExecContext", "PrepareContext"),
}

var sqlHandles = map[string]map[string]bool{
	"database/sql":           setOf("DB", "Tx", "Conn", "Stmt"),
	"github.com/uptrace/bun": setOf("DB", "Tx", "Conn", "IDB"),
}

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

type sqlCall struct {
	pos, pkg, fn, call string
}

type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Standard                bool
	Module                  *struct{ Main bool }
}

// databaseSQLCalls type-checks the module at root (against the export data
// go list builds) and returns its calls of sqlMethods on sqlHandles.
func databaseSQLCalls(t *testing.T, root string) []sqlCall {
	t.Helper()
	// The export data of the build this test is part of: under go test
	// -race the packages are compiled with -race already (or are being, by
	// the same go test), so the list finds them in the build cache; without
	// the flag it compiled the whole module and its dependencies a second
	// time, which on an empty cache was the fast tier's largest extra cost.
	args := []string{"list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Standard,Module"}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var mine []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Main {
			mine = append(mine, p)
		}
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	var calls []sqlCall
	for _, p := range mine {
		rel, err := filepath.Rel(absRoot, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		if sqlStyleFreeDir(rel) {
			continue
		}
		calls = append(calls, packageSQLCalls(t, fset, imp, p, rel)...)
	}
	return calls
}

func sqlStyleFreeDir(rel string) bool {
	for dir := range sqlStyleFree {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

func packageSQLCalls(t *testing.T, fset *token.FileSet, imp types.Importer, p listedPackage, rel string) []sqlCall {
	var files []*ast.File
	uses := false
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range f.Imports {
			path := strings.Trim(is.Path.Value, `"`)
			uses = uses || path == "database/sql" || path == "github.com/uptrace/bun"
		}
		files = append(files, f)
	}
	if !uses {
		return nil // no handle of either can be named without importing its package
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", p.ImportPath, err)
	}
	var out []sqlCall
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if what, ok := sqlMethodCall(info.Selections[sel]); ok {
					out = append(out, sqlCall{pos: fset.Position(call.Pos()).String(), pkg: rel, fn: funcName(fd), call: what})
				}
				return true
			})
		}
	}
	return out
}

// sqlMethodCall names a selection that is a method of sqlMethods on a
// handle of sqlHandles ("sql.DB.ExecContext"): the handle is the type of
// the expression the method is selected from, or the type that declares
// the method (one promoted from an embedded *sql.DB is *sql.DB's).
func sqlMethodCall(s *types.Selection) (string, bool) {
	if s == nil || s.Kind() != types.MethodVal {
		return "", false
	}
	candidates := []types.Type{s.Recv()}
	if sig, ok := s.Obj().Type().(*types.Signature); ok && sig.Recv() != nil {
		candidates = append(candidates, sig.Recv().Type())
	}
	for _, c := range candidates {
		if ptr, ok := c.(*types.Pointer); ok {
			c = ptr.Elem()
		}
		named, ok := c.(*types.Named)
		if !ok || named.Obj().Pkg() == nil {
			continue
		}
		pkg, name, method := named.Obj().Pkg().Path(), named.Obj().Name(), s.Obj().Name()
		if sqlHandles[pkg][name] && sqlMethods[pkg][method] {
			return named.Obj().Pkg().Name() + "." + name + "." + method, true
		}
	}
	return "", false
}

// funcName is fd's name, a method's as Type.Method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
