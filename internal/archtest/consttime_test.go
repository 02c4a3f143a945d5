package archtest

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// Keys, key hashes, signatures, MACs, tokens, passwords and one-time codes
// are compared in constant time (hmac.Equal, subtle.ConstantTimeCompare),
// never with == or != or bytes.Equal, strings.EqualFold, slices.Equal or
// reflect.DeepEqual, which stop at the first differing byte and so tell an
// attacker who measures answers how much of a guess was right. No
// behavioural test can see the difference, so the source is read instead:
// every such comparison of the module's non-test Go files whose operand is
// named like a secret (a word of its identifiers is one of secretWords)
// fails the test, unless it is on the allow-list below with its reason.
//
// What is not a finding: a comparison with a literal, nil or a length
// (len(sig) != 64, token == "" leak only what the format already says), and
// one whose operands' head words name something else (keyKind, tokenType,
// KeySigning: a kind, a type, a constant naming a key).
func TestSecretsAreComparedInConstantTime(t *testing.T) {
	used := map[string]bool{}
	for _, f := range secretComparisons(t, "../..") {
		key := f.where + " " + f.operand
		if _, ok := constTimeAllowed[key]; ok {
			used[key] = true
			continue
		}
		t.Errorf("%s: %s compares %s; use hmac.Equal or subtle.ConstantTimeCompare (or, if it is no secret, "+
			"add %q to constTimeAllowed with the reason)", f.pos, f.what, f.operand, key)
	}
	// The list holds only what is there, each with its reason.
	for key, why := range constTimeAllowed {
		if !used[key] {
			t.Errorf("constTimeAllowed: %q matches no comparison any more; remove it", key)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("constTimeAllowed: %q has no reason", key)
		}
	}
}

// constTimeAllowed are the comparisons of secret-named values where time
// does not matter, keyed by file, enclosing function and operand, with the
// reason: none compares a credential with a guess.
var constTimeAllowed = map[string]string{
	"internal/cellmove/checks.go checkDataKeys a": "two cells' data key fingerprints, public digests compared to refuse a move, no secret",
	"internal/cellmove/checks.go checkDataKeys w": "two cells' wrapped (sealed) key versions, compared for equality to refuse a move; ciphertexts stored alike in both",
	"internal/cellmove/verify.go equal h.Hash":    "journal heads' hashes, public chain digests compared across cells",
	"tools/chaos/moves_checks.go check hash":      "a moved merchant's head hash in its tombstone and the target's entry: public chain digests",
	"internal/console/account.go checkPasswordForm again": "the new password and its confirmation, both typed in " +
		"this request: nothing stored is compared (the current password is checked by CheckPassword)",
	"internal/console/account.go checkPasswordForm pw": "the new password against the current one as typed in this " +
		"request, to refuse reusing it; the stored hash is checked by CheckPassword",
	"internal/console/auth/password.go CheckPassword parts[2]": "the stored PHC string's version field against argon2's: " +
		"the hash's public format, not its bytes",
	"internal/console/books/journal.go entry e.Hash[:]": "the auditor's entry page recomputes a journal entry's chain hash; " +
		"chain hashes are shown on the page, no secret, and nobody guesses them",
	"internal/console/books/journal.go entry e.PrevHash": "the same page checks the entry's link to the previous one's " +
		"(public) hash",
	"internal/remittance/rules/sanctions_index.go keysMatch a": "words of a sanctions screening key (a name's " +
		"normal form), not a credential: a hash hit is confirmed against the real key",
	"internal/remittance/rules/sanctions_index.go keysMatch wordSet(a)": "the same screening key's words as a set, " +
		"not a credential",
	"internal/remittance/rules/sanctions_index.go keysMatch strings.Join(a, \"\")": "the same screening key with " +
		"its spaces removed, not a credential",
	"internal/audit/close_verify.go reach c.HeadHash": "a journal entry's chain hash against the period close's " +
		"recorded head: both are public (an auditor reads them), nothing secret is compared",
	"internal/audit/checkpoint.go entry f.cur.Hash": "a journal entry's chain hash against the checkpoint's " +
		"(public) one: the auditor holds both, nobody guesses them",
	"internal/audit/verify_stream.go merge s.cur.entries.key()":  "the sort-merge keys (merchant, seq) of Verify's streams",
	"internal/audit/verify_stream.go merge s.cur.postings.key()": "the sort-merge keys (merchant, seq) of Verify's streams",
	"internal/audit/verify_stream.go merge s.cur.lines.key()":    "the sort-merge keys (merchant, seq) of Verify's streams",
	"internal/audit/verify_stream.go finishEntry r.PrevHash": "hash-chain verification: Verify computes both sides from the " +
		"journal it reads; no attacker's guess, and the hashes are public",
	"internal/audit/verify_stream.go finishEntry s.hash":    "hash-chain verification, as above",
	"internal/audit/verify_stream.go finishMerchant h.hash": "the head's hash against the last entry's, as above",
}

// secretWords are the words of an identifier that make it a secret's.
var secretWords = map[string]bool{
	"key": true, "keys": true, "hash": true, "hashes": true, "sig": true, "sigs": true, "signature": true,
	"signatures": true, "mac": true, "hmac": true, "token": true, "tokens": true, "tok": true, "secret": true,
	"secrets": true, "password": true, "passwords": true, "pw": true, "otp": true, "totp": true, "hotp": true,
	"digest": true, "csrf": true, "sign": true,
}

type secretComparison struct {
	pos     string // file:line:col
	where   string // file (from the module root) and enclosing function: the allow-list's key
	what    string // == or bytes.Equal …
	operand string // the secret-named operand, as written
}

// secretComparisons lists the secret-named comparisons of the non-test Go
// files under root.
func secretComparisons(t *testing.T, root string) []secretComparison {
	t.Helper()
	var out []secretComparison
	eachGoFile(t, root, func(fset *token.FileSet, rel string, f *ast.File) {
		out = append(out, secretComparisonsIn(fset, rel, f)...)
	})
	slices.SortFunc(out, func(a, b secretComparison) int { return strings.Compare(a.pos, b.pos) })
	return out
}

// variableTimeEquals are the functions that compare byte by byte and stop
// early.
var variableTimeEquals = map[string]bool{
	"bytes.Equal": true, "strings.EqualFold": true, "slices.Equal": true, "reflect.DeepEqual": true,
	"bytes.EqualFold": true, "strings.Compare": true, "bytes.Compare": true,
}

func secretComparisonsIn(fset *token.FileSet, file string, f *ast.File) []secretComparison {
	var out []secretComparison
	for _, decl := range f.Decls {
		fn := "(package level)"
		secretFunc := false
		if fd, ok := decl.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
			secretFunc = comparesSecrets(fd.Name.Name)
		}
		tainted := secretDerived(decl)
		check := func(n ast.Node, what string, operands ...ast.Expr) {
			for _, o := range operands {
				if isConstantOperand(o) {
					return
				}
			}
			for _, o := range operands {
				if secretFunc || secretNamed(o) || mentions(o, tainted) {
					out = append(out, secretComparison{pos: fset.Position(n.Pos()).String(), where: file + " " + fn,
						what: what, operand: exprString(fset, o)})
					return
				}
			}
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					check(n, n.Op.String(), n.X, n.Y)
				}
			case *ast.CallExpr:
				if q := qualified(n.Fun); variableTimeEquals[q] && len(n.Args) == 2 {
					check(n, q, n.Args[0], n.Args[1])
				}
			}
			return true
		})
	}
	return out
}

// secretMakers are the functions whose results are hashes, MACs or derived
// keys, whatever the variable that holds one is called: want :=
// sha256.Sum256(…) is a secret's digest.
var secretMakers = map[string]bool{
	"sha256.Sum256": true, "sha256.Sum224": true, "sha512.Sum512": true, "sha1.Sum": true, "md5.Sum": true,
	"hmac.New": true, "argon2.IDKey": true, "argon2.Key": true, "pbkdf2.Key": true, "scrypt.Key": true,
}

// secretDerived finds the variables of a declaration that hold a secret or
// something made from one, whatever they are called: assigned (or ranged,
// decoded, copied, appended) from a secret-named value, a secretMaker's
// result, a hash's Sum, a secret-named function's single result (want :=
// digest(…)), or another such variable. Only the value itself counts, not
// what is computed with it (err of authenticate(key) is no secret). Names,
// not objects: a shadowed name is taken as the same variable, which can
// only add findings.
func secretDerived(decl ast.Decl) map[string]bool {
	tainted := map[string]bool{}
	var direct func(e ast.Expr, single bool) bool
	direct = func(e ast.Expr, single bool) bool {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return tainted[x.Name] || secretNamed(x)
		case *ast.SelectorExpr:
			return secretNamed(x)
		case *ast.IndexExpr:
			return direct(x.X, single)
		case *ast.SliceExpr:
			return direct(x.X, single)
		case *ast.StarExpr:
			return direct(x.X, single)
		case *ast.UnaryExpr:
			return direct(x.X, single)
		case *ast.CallExpr:
			q := qualified(x.Fun)
			switch {
			case secretMakers[q]:
				return true
			case q == "append" || len(x.Args) == 1 && isConversion(x.Fun):
				for _, a := range x.Args {
					if direct(a, single) {
						return true
					}
				}
				return false
			}
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sum" {
				return true
			}
			return single && secretNamed(x.Fun)
		}
		return false
	}
	mark := func(lhs ...ast.Expr) bool {
		changed := false
		for _, l := range lhs {
			if id := rootIdent(l); id != nil && id.Name != "_" && !tainted[id.Name] {
				tainted[id.Name] = true
				changed = true
			}
		}
		return changed
	}
	for changed := true; changed; {
		changed = false
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Lhs) == len(n.Rhs) {
					for i, r := range n.Rhs {
						if direct(r, true) {
							changed = mark(n.Lhs[i]) || changed
						}
					}
				}
			case *ast.ValueSpec:
				if len(n.Names) == len(n.Values) {
					for i, v := range n.Values {
						if direct(v, true) {
							changed = mark(n.Names[i]) || changed
						}
					}
				}
			case *ast.RangeStmt:
				if direct(n.X, false) && n.Value != nil {
					changed = mark(n.Value) || changed
				}
			case *ast.CallExpr:
				// hex.Decode(dst, src), copy(dst, src), base64 …Decode(dst, src)
				if q := qualified(n.Fun); (q == "copy" || strings.HasSuffix(q, ".Decode")) && len(n.Args) == 2 && direct(n.Args[1], false) {
					changed = mark(n.Args[0]) || changed
				}
			}
			return true
		})
	}
	return tainted
}

// isConversion reports a conversion to a byte or string type: []byte(x),
// string(x).
func isConversion(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "string"
	case *ast.ArrayType:
		return true
	}
	return false
}

// comparesSecrets reports a function that exists to compare a secret:
// sameToken, CheckPassword, checkTOTP, verifySignature. Whatever it
// compares is the secret, however its variables are named.
func comparesSecrets(fn string) bool {
	verb, secret := false, false
	for _, w := range identWords(fn) {
		verb = verb || w == "same" || w == "equal" || w == "check" || w == "verify" || w == "match"
		secret = secret || secretWords[w]
	}
	return verb && secret
}

// mentions reports whether e uses a tainted variable.
func mentions(e ast.Expr, tainted map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && tainted[id.Name] {
			found = true
		}
		return !found
	})
	return found
}

// rootIdent is the variable an assignment writes: got in got, got[:],
// sums[i]. A field (s.hash = …) is judged by its own name, not by
// tainting the whole of s.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.IndexExpr:
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// qualified is pkg.Name for a call of a package's function (or a method
// on a variable: the same shape), the bare name for a builtin or local
// function, "" otherwise.
func qualified(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	}
	return ""
}

// isConstantOperand reports nil, a literal, a constant-looking identifier
// (true, false, iota) or a length: comparing with one reveals nothing of
// the other operand's bytes.
func isConstantOperand(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return e.Name == "nil" || e.Name == "true" || e.Name == "false"
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok && (id.Name == "len" || id.Name == "cap") {
			return true
		}
		// json.Delim('{'), byte('x'): a conversion or call of constants
		for _, a := range e.Args {
			if !isConstantOperand(a) {
				return false
			}
		}
		return len(e.Args) > 0
	case *ast.CompositeLit: // [32]byte{}: the zero value
		return len(e.Elts) == 0
	}
	return false
}

// secretNamed reports an operand whose own name (the last identifier of
// it, or of the function that made it) ends in a secret word.
func secretNamed(e ast.Expr) bool {
	var ident string
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		ident = e.Name
	case *ast.SelectorExpr:
		ident = e.Sel.Name
	case *ast.IndexExpr:
		return secretNamed(e.X)
	case *ast.SliceExpr:
		return secretNamed(e.X)
	case *ast.StarExpr:
		return secretNamed(e.X)
	case *ast.CallExpr:
		// string(sig), hex.EncodeToString(mac), sign(body): the conversion's
		// operand or the maker's name.
		if len(e.Args) == 1 && secretNamed(e.Args[0]) {
			return true
		}
		return secretNamed(e.Fun)
	default:
		return false
	}
	// The head word names the thing: keyHash is a hash, keyKind a kind,
	// KeySigning a kind of key (a constant), hashKey a key.
	// byKey is a map by key: its values are not keys.
	words := identWords(ident)
	return len(words) > 0 && words[0] != "by" && secretWords[words[len(words)-1]]
}

// identWords splits an identifier into its lower-case words: KeyHash →
// key, hash; prev_sig → prev, sig; HMACKey → hmac, key.
func identWords(s string) []string {
	var words []string
	rs := []rune(s)
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '_' || unicode.IsDigit(rs[i]):
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(rs[i]) &&
			(unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush(i)
		}
	}
	flush(len(rs))
	return words
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var sb strings.Builder
	if err := printer.Fprint(&sb, fset, e); err != nil {
		return "?"
	}
	return sb.String()
}

// The scanner finds each shape of a variable-time comparison of a secret
// and none of the harmless ones, or the test above passes whatever the
// code says.
func TestSecretComparisonsAreFound(t *testing.T) {
	src := `package x
func verify(sign string, body []byte, privateKey string) bool {
	var got [32]byte
	hex.Decode(got[:], []byte(sign))
	want := digest(body, privateKey)
	return got == want // found: got holds the decoded signature
}
func auth(given [32]byte, r row) bool { return bytes.Equal(given[:], r.KeyHash) } // found: KeyHash
func sameToken(a, b string) bool { return a != "" && a == b } // found: the function compares tokens
func requireToken(token string) bool {
	w := sha256.Sum256([]byte(token))
	g := sha256.Sum256([]byte(header()))
	return g != w // found: digests
}
func harmless(kind string, keyKind int, sig []byte, byKey map[string]row, o row) bool {
	for _, o := range byKey {
		_ = o.kind == "x"
	}
	return kind == KeySigning || keyKind == 2 || len(sig) != 64 || sig == nil || o.sum != o.total
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := secretComparisonsIn(fset, "x.go", f)
	var where []string
	for _, c := range got {
		where = append(where, c.where+" "+c.operand)
	}
	want := []string{"x.go verify got", "x.go auth r.KeyHash", "x.go sameToken a", "x.go requireToken g"}
	if !slices.Equal(where, want) {
		t.Errorf("found %q, want %q", where, want)
	}
}

func TestIdentWords(t *testing.T) {
	for in, want := range map[string]string{
		"KeyHash": "key hash", "prev_sig": "prev sig", "HMACKey": "hmac key", "TOTPSecret": "totp secret",
		"csrfToken": "csrf token", "x": "x", "sha256Sum": "sha sum",
	} {
		if got := strings.Join(identWords(in), " "); got != want {
			t.Errorf("identWords(%q) = %q, want %q", in, got, want)
		}
	}
}
