package postings

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// addressRe matches an account address ("m:17:funding:USD"), which names
// the merchant's internal id and card tokens and must never be in a
// message.
var addressRe = regexp.MustCompile(`m:\d+:[a-z_]+:[A-Z]{3}`)

// errorBuilders are the calls whose message can reach a client or an
// operator: this package's constructors and the standard ones.
var errorBuilders = map[string]bool{"Errorf": true, "FieldErrorf": true, "ReasonErrorf": true, "New": true}

// No error message of the module is built from an account address: every
// call of an error constructor, and every Message of an Error literal, is
// searched for a call of Address or AppendAddress. An account is described
// by its type and currency instead. This is the class of the issue's
// finding (a balance overflow answered with the card account's address),
// not only its example.
func TestNoAccountAddressInErrorMessages(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "var" || name == "bin") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		// A leak is a call named Address or AppendAddress, so a file
		// without the word has none: it is not parsed, which under -race
		// made this the fast tier's slowest postings test (make test-short).
		if !bytes.Contains(src, []byte("Address")) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, leak := range addressLeaks(f) {
			t.Errorf("%s: an error message is built from an account address", fset.Position(leak))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked under %s: the walk is broken", checked, root)
	}
}

// The scan finds planted leaks: the test above can fail.
func TestAddressLeaksAreFound(t *testing.T) {
	src := `package x
func f(a Account) error { return Errorf(EINVALID, "bad %s", a.Address()) }
func g(a Account) error { return &Error{Message: string(a.AppendAddress(nil))} }
func h(a Account) error { return fmt.Errorf("account %s: %w", a.Address(), err) }
func k(a Account) error { return Errorf(EINVALID, "bad %s", a.Type) }
func n(a Account) string { return a.Address() }`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if leaks := addressLeaks(f); len(leaks) != 3 {
		t.Fatalf("found %d leaks, want 3", len(leaks))
	}
}

// addressLeaks returns where f builds an error message from an account
// address.
func addressLeaks(f *ast.File) []token.Pos {
	var out []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if errorBuilders[calleeName(n.Fun)] {
				for _, arg := range n.Args {
					if call := addressCall(arg); call != nil {
						out = append(out, call.Pos())
					}
				}
			}
		case *ast.CompositeLit:
			if calleeName(n.Type) != "Error" {
				return true
			}
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && calleeName(kv.Key) == "Message" {
					if call := addressCall(kv.Value); call != nil {
						out = append(out, call.Pos())
					}
				}
			}
		}
		return true
	})
	return out
}

// Every message of entry validation describes accounts without their
// addresses.
func TestEntryValidationMessagesNameNoAddress(t *testing.T) {
	card := CardAccount(7, AccountCardAvailable, "USD", "crd_abc")
	for _, mutate := range []func(e *Entry){
		func(e *Entry) { e.Postings[0].Currency = "EUR" },
		func(e *Entry) { e.Postings[0].Source.Merchant = 8 },
		func(e *Entry) { e.Postings[0].Destination.Merchant = 8 },
		func(e *Entry) { e.Postings[0].Destination = e.Postings[0].Source },
		func(e *Entry) { e.Postings[0].Destination.Currency = "EUR" },
	} {
		e := Entry{Merchant: 7, Kind: KindCardFund, Postings: []Posting{
			{Source: funding(7, "USD"), Destination: card, Amount: 100, Currency: "USD"},
		}}
		mutate(&e)
		err := e.Validate()
		if err == nil {
			t.Fatalf("invalid entry %+v accepted", e)
		}
		if addressRe.MatchString(err.Error()) || strings.Contains(err.Error(), "crd_abc") {
			t.Errorf("message names an address: %v", err)
		}
	}
}

// addressCall returns the first call of Address or AppendAddress in e.
func addressCall(e ast.Expr) *ast.CallExpr {
	var found *ast.CallExpr
	ast.Inspect(e, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		if c, ok := n.(*ast.CallExpr); ok {
			if name := calleeName(c.Fun); name == "Address" || name == "AppendAddress" {
				found = c
				return false
			}
		}
		return true
	})
	return found
}

// calleeName is the last name of a function or type expression: "Errorf"
// for postings.Errorf or fmt.Errorf, "Error" for &postings.Error{…}.
func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
