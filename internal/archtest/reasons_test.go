package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// A business failure's reason is a postings.Reason constant wherever the
// error is made or matched, never a string literal: the API picks the
// business code by (code, reason) in one table, and a literal that drifts
// from the constant on either side silently turns a business code into a
// generic one. Constant declarations are where the literals belong.
func TestReasonsAreConstants(t *testing.T) {
	for _, why := range reasonLiterals(t, "../..") {
		t.Error(why)
	}
}

// reasonLiterals finds, in the non-test Go files under root, a string
// literal given as a reason: the reason of ReasonErrorf, the Reason of an
// Error literal, a comparison with a Reason, or the reason of a key of the
// API's reason table.
func reasonLiterals(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	eachGoFile(t, root, func(fset *token.FileSet, _ string, f *ast.File) {
		out = append(out, reasonLiteralsIn(fset, f)...)
	})
	slices.Sort(out)
	return out
}

func reasonLiteralsIn(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(n ast.Node, what string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+what+" is a string literal, not a postings.Reason constant")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if name(n.Fun) == "ReasonErrorf" && len(n.Args) > 1 && isString(n.Args[1]) {
				report(n.Args[1], "the reason of ReasonErrorf")
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) &&
				((name(n.X) == "Reason" && isString(n.Y)) || (name(n.Y) == "Reason" && isString(n.X))) {
				report(n, "a compared Reason")
			}
		case *ast.CompositeLit:
			switch {
			case isPostingsError(n.Type, f.Name.Name): // postings.Error{…, Reason: …}
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && name(kv.Key) == "Reason" && isString(kv.Value) {
						report(kv.Value, "the Reason of an Error")
					}
				}
			case name(n.Type) == "reasonKey":
				checkReasonKey(n, report)
			case isReasonTable(n.Type):
				// The keys of the API's table, {code, reason}, with their
				// type elided.
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.CompositeLit); ok {
							checkReasonKey(k, report)
						}
					}
				}
			}
		}
		return true
	})
	return out
}

// isPostingsError reports the type postings.Error (Error inside postings).
func isPostingsError(e ast.Expr, pkg string) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return pkg == "postings" && e.Name == "Error"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "postings" && e.Sel.Name == "Error"
	}
	return false
}

func checkReasonKey(k *ast.CompositeLit, report func(ast.Node, string)) {
	if len(k.Elts) == 2 && isString(k.Elts[1]) {
		report(k.Elts[1], "the reason of a reasonKey")
	}
}

// isReasonTable reports a map type keyed by reasonKey.
func isReasonTable(e ast.Expr) bool {
	m, ok := e.(*ast.MapType)
	return ok && name(m.Key) == "reasonKey"
}

// name is the last identifier of an expression: Reason in e.Reason,
// ReasonErrorf in postings.ReasonErrorf.
func name(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// isString reports a string literal other than "" (an empty reason is no
// reason).
func isString(e ast.Expr) bool {
	b, ok := e.(*ast.BasicLit)
	return ok && b.Kind == token.STRING && b.Value != `""` && b.Value != "``"
}

// The check finds each form, or the test above passes whatever the code
// says.
func TestReasonLiteralsAreFound(t *testing.T) {
	src := `package x
var table = map[reasonKey]int{{postings.ENOTFOUND, "card"}: 1, {postings.ENOTFOUND, postings.ReasonCard}: 2}
func f(err error) error {
	if postings.AsError(err).Reason == "shop_no" || pe.Reason != postings.ReasonShopNo || e.Reason == "" {
		return &postings.Error{Code: postings.ECONFLICT, Reason: "idempotency_race"}
	}
	_ = &postings.Error{Reason: postings.ReasonMessageID}
	return postings.ReasonErrorf(postings.ESTATE, "card_frozen", "frozen")
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := reasonLiteralsIn(fset, f); len(got) != 4 {
		t.Errorf("found %d, want 4: %q", len(got), got)
	}
}
