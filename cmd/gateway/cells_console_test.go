package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/console"
)

// consoleUser creates a console user with the CLI in the database at
// dbURL (with GATEWAY_CELLS unset: a house user in the home cell, a
// merchant's user in its merchant's cell, docs/scaling.md) and returns its
// password and TOTP secret.
func (g *gateway) consoleUser(dbURL, login, role, shopNo string) (pw, totp string) {
	g.t.Helper()
	pw = "a long enough password " + login
	file := filepath.Join(g.t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte(pw), 0o600); err != nil {
		g.t.Fatal(err)
	}
	cellsEnv := g.env["GATEWAY_CELLS"]
	delete(g.env, "GATEWAY_CELLS")
	g.env["DATABASE_URL"] = dbURL
	defer func() { g.env["GATEWAY_CELLS"] = cellsEnv; delete(g.env, "DATABASE_URL") }()
	args := []string{"console", "user", "create", "--login", login, "--role", role, "--password-file", file}
	if shopNo != "" {
		args = append(args, "--shop-no", shopNo)
	}
	var c console.Created
	if err := json.Unmarshal([]byte(g.mustRun(args...)), &c); err != nil {
		g.t.Fatal(err)
	}
	return pw, c.TOTPSecret
}

// merchantIn creates a merchant named name in cell.
func (g *gateway) merchantIn(cell, name string) credentials {
	g.t.Helper()
	var c credentials
	if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", name, "--currencies", "USD", "--cell", cell)), &c); err != nil {
		g.t.Fatal(err)
	}
	return c
}

// consoleSession is a browser of the console: its cookies, and the pages
// it gets.
type consoleSession struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (g *gateway) consoleSession(s *server) *consoleSession {
	g.t.Helper()
	m := consoleRe.FindStringSubmatch(s.stdout.String())
	if m == nil {
		g.t.Fatalf("serve printed no console address:\n%s\n%s", s.stdout, s.stderr)
	}
	jar, _ := cookiejar.New(nil)
	return &consoleSession{t: g.t, base: m[1] + "://" + m[2],
		c: &http.Client{Timeout: 30 * time.Second, Jar: jar, Transport: &http.Transport{TLSClientConfig: g.pinnedTLS(s)}}}
}

// do sends a GET (form nil) or a POST of form, and answers the final
// status, the page and where it ended.
func (cs *consoleSession) do(path string, form url.Values) (int, string, *http.Response) {
	cs.t.Helper()
	var res *http.Response
	var err error
	if form == nil {
		res, err = cs.c.Get(cs.base + path)
	} else {
		res, err = cs.c.PostForm(cs.base+path, form)
	}
	if err != nil {
		cs.t.Fatalf("%s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res
}

// csrf is the CSRF token of the form on the page at path.
func (cs *consoleSession) csrf(path string) string {
	cs.t.Helper()
	status, body, _ := cs.do(path, nil)
	tok := csrfRe.FindStringSubmatch(body)
	if status != 200 || tok == nil {
		cs.t.Fatalf("%s: %d, no CSRF field:\n%s", path, status, body)
	}
	return tok[1]
}

// upload posts a file (and fields) to a reconciliation page, as its form
// does, with the page's CSRF token.
func (cs *consoleSession) upload(path string, fields map[string]string, file string) (int, string) {
	cs.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", cs.csrf(path))
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", "statement.csv")
	_, _ = fw.Write([]byte(file))
	_ = mw.Close()
	res, err := cs.c.Post(cs.base+path, mw.FormDataContentType(), &buf)
	if err != nil {
		cs.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// signIn signs in and returns the page it lands on.
func (cs *consoleSession) signIn(shop, login, pw, totpSecret string) string {
	cs.t.Helper()
	code := ""
	if totpSecret != "" {
		var err error
		if code, err = console.TOTPCode(totpSecret, time.Now()); err != nil {
			cs.t.Fatal(err)
		}
	}
	status, body, res := cs.do("/login", url.Values{"csrf": {cs.csrf("/login")}, "shopNo": {shop}, "login": {login}, "password": {pw}, "totp": {code}})
	if status != 200 {
		cs.t.Fatalf("%s signed in to %d:\n%s", login, status, body)
	}
	return res.Request.URL.Path
}

// TestConsoleOverCells serves the console over two cells (docs/scaling.md,
// "The console over cells"): an operator of the home cell signs in once,
// lists the merchants of both cells, opens one of cell b2 and changes it
// (CSRF included), the change landing in b2's database; a merchant's admin
// of b2 signs in with its shop number, sees its cards and freezes one in
// b2; a merchant the directory marks moving answers the moving page to
// both, and is served again once active.
func TestConsoleOverCells(t *testing.T) {
	t.Parallel()
	g, dbA, dbB := cellsGateway(t)
	g.mustRun("cells", "init")
	mA, mB := g.merchantIn("a1", "Console a1"), g.merchantIn("b2", "Console b2")
	g.deposit(mA.ShopNo, "USD", "100.00")
	g.deposit(mB.ShopNo, "USD", "200.00", "--bank-reference", "SEPA-B2-1")
	opPw, opTOTP := g.consoleUser(dbA, "ops.one", "operator", "")
	adminPw, _ := g.consoleUser(dbB, "adm.b", "admin", mB.ShopNo)

	s := g.serve()
	// A card and an open hold in each cell.
	holds, cardOf := map[string]string{}, map[string]string{}
	for _, m := range []credentials{mA, mB} {
		status, v := s.shopCall("POST", "/shop/card/create", m.ShopNo, m.PublicKey, `{"bin":"453201","currency":"USD","amount":"10.00"}`)
		data, _ := v["data"].(map[string]any)
		cardNo, _ := data["cardNo"].(string)
		if status != 200 || cardNo == "" {
			t.Fatalf("card create: %d %v", status, v)
		}
		var a struct {
			AuthID string `json:"authId"`
		}
		out := g.mustRun("network", "authorize", "--card-no", cardNo, "--amount", "1.00", "--currency", "USD", "--addr", s.internalAddr())
		if err := json.Unmarshal([]byte(out), &a); err != nil || a.AuthID == "" {
			t.Fatalf("authorize %s: %s %v", cardNo, out, err)
		}
		holds[m.ShopNo], cardOf[m.ShopNo] = a.AuthID, cardNo
	}
	cardB := cardOf[mB.ShopNo]
	if !strings.HasPrefix(cardB, "crd_b2") {
		t.Fatalf("b2's card %s", cardB)
	}

	// The operator: one sign-in (the home cell's), both cells' merchants.
	op := g.consoleSession(s)
	if landed := op.signIn("", "ops.one", opPw, opTOTP); landed != "/operator/merchants" {
		t.Fatalf("operator landed on %s", landed)
	}
	if status, body, _ := op.do("/operator/merchants", nil); status != 200 || !strings.Contains(body, mA.ShopNo) ||
		!strings.Contains(body, mB.ShopNo) || strings.Contains(body, `id="cells-down"`) {
		t.Errorf("merchants over cells: %d, want both %s and %s:\n%s", status, mA.ShopNo, mB.ShopNo, body)
	}
	// The holds near expiry of both cells, on one page.
	if status, body, _ := op.do("/operator/holds?within=7d", nil); status != 200 || !strings.Contains(body, holds[mA.ShopNo]) ||
		!strings.Contains(body, holds[mB.ShopNo]) {
		t.Errorf("holds over cells: %d, want %v:\n%s", status, holds, body)
	}
	// b2's merchant's journal, and its first entry recomputed.
	if status, body, _ := op.do("/audit/journal?shopNo="+mB.ShopNo, nil); status != 200 || !strings.Contains(body, "DEPOSIT") {
		t.Errorf("journal of b2's merchant: %d:\n%s", status, body)
	}
	if status, body, _ := op.do("/audit/journal/"+mB.ShopNo+"/1", nil); status != 200 || !strings.Contains(body, "DEPOSIT") {
		t.Errorf("entry 1 of b2's merchant: %d:\n%s", status, body)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if status, body, _ := op.do("/audit/statement?shopNo="+mB.ShopNo+"&startDate="+today+"&endDate="+today, nil); status != 200 ||
		!strings.Contains(body, "190.00") {
		t.Errorf("statement of b2's merchant: %d, want its funding closing at 190.00:\n%s", status, body)
	}
	// The bank statement of b2's merchant is reconciled, and recorded, in b2.
	statement := "# period: " + today + "\nvalue_date,amount,currency,reference\n" + today + ",200.00,USD,SEPA-B2-1\n"
	if status, body := op.upload("/audit/bank", map[string]string{"shopNo": mB.ShopNo}, statement); status != 200 ||
		!strings.Contains(body, `data-exit-status="0"`) {
		t.Errorf("bank statement of b2's merchant: %d:\n%s", status, body)
	}
	if n := queryIn(t, dbB, "select count(*) from reconciliation_runs"); n != "1" {
		t.Errorf("b2 holds %s reconciliation runs, want 1", n)
	}
	// An adjustment of b2's merchant: proposed by one operator and approved
	// by another (maker-checker), both of the home cell, in b2, where each
	// operator's disabled, secretless mirror is made for its foreign keys.
	propose := url.Values{"csrf": {op.csrf("/house/adjustments")}, "shopNo": {mB.ShopNo}, "mode": {"free"}, "houseAccount": {"world"},
		"direction": {"credit"}, "amount": {"5.00"}, "currency": {"USD"}, "reason": {"a goodwill credit"}, "reference": {"T-1"}}
	if status, body, res := op.do("/house/adjustments", propose); status != 200 || res.Request.URL.Query().Get("done") == "" {
		t.Fatalf("an adjustment of b2's merchant: %d %s:\n%s", status, res.Request.URL, body)
	}
	id := queryIn(t, dbB, "select id::text from adjustments where status = 'PROPOSED'")
	op2Pw, op2TOTP := g.consoleUser(dbA, "ops.two", "operator", "")
	op2 := g.consoleSession(s)
	op2.signIn("", "ops.two", op2Pw, op2TOTP)
	list := "/house/adjustments?shopNo=" + mB.ShopNo
	if status, body, res := op2.do("/house/adjustments/"+id+"/approve", url.Values{"csrf": {op2.csrf(list)}, "shopNo": {mB.ShopNo}}); status != 200 ||
		res.Request.URL.Query().Get("done") == "" {
		t.Fatalf("approval: %d %s:\n%s", status, res.Request.URL, body)
	}
	if got := queryIn(t, dbB, "select status from adjustments where id = $1::bigint", id); got != "APPROVED" ||
		queryIn(t, dbA, "select count(*) from adjustments") != "0" ||
		queryIn(t, dbB, "select count(*) from console_users where merchant_id is null and disabled and login in ('ops.one', 'ops.two')") != "2" {
		t.Errorf("the adjustment in b2: %q; a1's adjustments or b2's mirrors wrong", got)
	}
	page := "/operator/merchants/" + mB.ShopNo
	if status, body, _ := op.do(page, nil); status != 200 || !strings.Contains(body, "Console b2") || !strings.Contains(body, "195.00") {
		t.Fatalf("merchant of b2: %d, want its name and funding balance 195.00:\n%s", status, body)
	}
	// A change without the CSRF token is refused, with it lands in b2.
	if status, _, _ := op.do(page+"/whitelist", url.Values{"ipWhitelist": {"203.0.113.7"}}); status != 403 {
		t.Errorf("whitelist without CSRF: %d, want 403", status)
	}
	if status, body, res := op.do(page+"/whitelist", url.Values{"csrf": {op.csrf(page)}, "ipWhitelist": {"203.0.113.7"}}); status != 200 ||
		res.Request.URL.Query().Get("saved") != "whitelist" {
		t.Fatalf("whitelist: %d %s:\n%s", status, res.Request.URL, body)
	}
	if got := queryIn(t, dbB, "select array_to_string(ip_whitelist, ',') from merchants where shop_no = $1", mB.ShopNo); got != "203.0.113.7/32" {
		t.Errorf("b2's whitelist of %s: %q", mB.ShopNo, got)
	}
	// The operator's audit row is the home cell's trail.
	if n := queryIn(t, dbA, "select count(*) from console_audit where action = 'merchant.whitelist' and outcome = 'ok' and target = $1", mB.ShopNo); n != "1" {
		t.Errorf("audit rows of the whitelist in a1: %s", n)
	}

	// The merchant's admin of b2: signs in with its shop number, sees its
	// card, freezes it in b2.
	adm := g.consoleSession(s)
	if landed := adm.signIn(mB.ShopNo, "adm.b", adminPw, ""); landed != "/balances" {
		t.Fatalf("admin landed on %s", landed)
	}
	if status, body, _ := adm.do("/cards", nil); status != 200 || !strings.Contains(body, cardB) {
		t.Errorf("cards of b2's admin: %d, want %s:\n%s", status, cardB, body)
	}
	confirm := "/cards/" + cardB + "/freeze"
	if status, body, _ := adm.do(confirm, url.Values{"csrf": {adm.csrf(confirm)}, "reason": {"lost"}}); status != 200 {
		t.Errorf("freeze: %d:\n%s", status, body)
	}
	if got := queryIn(t, dbB, "select status from cards where card_no = $1", cardB); got != "FROZEN" {
		t.Errorf("card %s in b2: %q, want FROZEN", cardB, got)
	}

	// The router's shop cookie is a hint, not a credential: the admin
	// is refused the operator's page of a merchant of the other cell, and
	// the operator's session, sent with the cookie naming b2's merchant,
	// finds no session in b2 (the login page), then works again without it.
	if status, _, _ := adm.do("/operator/merchants/"+mA.ShopNo, nil); status != 403 {
		t.Errorf("b2's admin on a1's operator page: %d, want 403", status)
	}
	base, _ := url.Parse(op.base)
	op.c.Jar.SetCookies(base, []*http.Cookie{{Name: "__Host-console-shop", Value: mB.ShopNo, Path: "/", Secure: true}})
	if _, _, res := op.do("/operator/merchants", nil); res.Request.URL.Path != "/login" {
		t.Errorf("the operator with b2's shop cookie reached %s, want /login", res.Request.URL.Path)
	}
	op.c.Jar.SetCookies(base, []*http.Cookie{{Name: "__Host-console-shop", Value: "", Path: "/", Secure: true, MaxAge: -1}})
	if status, _, res := op.do("/operator/merchants", nil); status != 200 || res.Request.URL.Path != "/operator/merchants" {
		t.Errorf("the operator without the cookie: %d %s", status, res.Request.URL.Path)
	}

	// Moving: both answer the moving page (503, Retry-After) once the
	// router's cache has expired; the list of merchants is still served.
	setState := func(state string) {
		t.Helper()
		sqlIn(t, dbA, "update cell_directory set state = $1 where shop_no = $2", state, mB.ShopNo)
	}
	waitStatus := func(cs *consoleSession, path string, want int) (string, *http.Response) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			status, body, res := cs.do(path, nil)
			if status == want {
				return body, res
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d, want %d within a minute:\n%s", path, status, want, body)
			}
			time.Sleep(100 * time.Millisecond) // polling the router's cache expiry, not synchronising
		}
	}
	setState("moving")
	for _, c := range []struct {
		cs   *consoleSession
		path string
	}{{op, page}, {adm, "/cards"}} {
		body, res := waitStatus(c.cs, c.path, 503)
		if res.Header.Get("Retry-After") == "" || !strings.Contains(body, "moving between cells") {
			t.Errorf("%s of a moving merchant: Retry-After %q:\n%s", c.path, res.Header.Get("Retry-After"), body)
		}
	}
	if status, body, _ := op.do("/operator/merchants", nil); status != 200 || !strings.Contains(body, mA.ShopNo) {
		t.Errorf("merchants while one moves: %d:\n%s", status, body)
	}
	// Signing in to a moving merchant is the moving page too.
	fresh := g.consoleSession(s)
	if status, body, _ := fresh.do("/login", url.Values{"csrf": {fresh.csrf("/login")}, "shopNo": {mB.ShopNo}, "login": {"adm.b"},
		"password": {adminPw}}); status != 503 || !strings.Contains(body, "moving between cells") {
		t.Errorf("sign-in to a moving merchant: %d:\n%s", status, body)
	}
	setState("active")
	waitStatus(op, page, 200)
	waitStatus(adm, "/cards", 200)
}

// TestConsoleOverCellsOperatorData: the operator's pages that are no one
// merchant's, over two cells. A BIN and an FX rate set from the console
// reach both cells (cells.Each, as the CLI's one command); a merchant
// created from the console goes to the emptiest cell and into the
// directory. With cell b2 unreachable, the list of merchants names b2 and
// shows a1's, and a BIN saved is 503 naming b2, written in a1 (the same
// form again brings b2 level).
func TestConsoleOverCellsOperatorData(t *testing.T) {
	t.Parallel()
	g, dbA, dbB := cellsGateway(t)
	g.mustRun("cells", "init")
	mA := g.merchantIn("a1", "Console a1")
	opPw, opTOTP := g.consoleUser(dbA, "ops.one", "operator", "")
	s := g.serve()
	op := g.consoleSession(s)
	op.signIn("", "ops.one", opPw, opTOTP)

	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("csrf", op.csrf(path))
		status, body, _ := op.do(path, form)
		return status, body
	}
	if status, body := post("/operator/bins", url.Values{"bin": {"55443322"}, "currency": {"USD"}, "network": {"MASTERCARD"}, "enabled": {"on"}}); status != 200 {
		t.Fatalf("bin: %d:\n%s", status, body)
	}
	if status, body := post("/operator/rates", url.Values{"pair": {"USD/JPY"}, "rate": {"151.5"}, "spreadBps": {"25"}}); status != 200 {
		t.Fatalf("rate: %d:\n%s", status, body)
	}
	for _, db := range []string{dbA, dbB} {
		if n := queryIn(t, db, "select count(*) from bins where bin = '55443322'"); n != "1" {
			t.Errorf("the BIN is in %s %s times", db, n)
		}
		if r := queryIn(t, db, "select mid_rate::text from fx_rates where base = 'USD' and quote = 'JPY'"); r != "151.5" {
			t.Errorf("USD/JPY in %s: %q", db, r)
		}
	}
	if status, body := post("/operator/merchants", url.Values{"name": {"Made in console"}, "currencies": {"USD"}}); status != 200 {
		t.Fatalf("merchant create: %d:\n%s", status, body)
	}
	shop := queryIn(t, dbB, "select shop_no from merchants where name = 'Made in console'")
	if !strings.HasPrefix(shop, "SH2") || queryIn(t, dbA, "select cell from cell_directory where shop_no = $1", shop) != "b2" {
		t.Errorf("the console's merchant %q is not placed in b2 (the emptiest)", shop)
	}

	// b2 unreachable: no new connection, the open ones ended.
	name := dbName(t, dbB)
	setConnections(t, dbA, name, false)
	t.Cleanup(func() { setConnections(t, dbA, name, true) })
	status, body, _ := op.do("/operator/merchants", nil)
	if status != 200 || !strings.Contains(body, mA.ShopNo) || strings.Contains(body, shop) ||
		!strings.Contains(body, `id="cells-down"`) || !strings.Contains(body, "cell b2") {
		t.Errorf("merchants with b2 down: %d, want a1's listed and b2 named:\n%s", status, body)
	}
	status, body = post("/operator/bins", url.Values{"bin": {"55443323"}, "currency": {"USD"}, "network": {"MASTERCARD"}, "enabled": {"on"}})
	if status != 503 || !strings.Contains(body, "cell b2") || queryIn(t, dbA, "select count(*) from bins where bin = '55443323'") != "1" {
		t.Errorf("a BIN with b2 down: %d, want 503 naming b2, written in a1:\n%s", status, body)
	}
}

// dbName is the database of a URL.
func dbName(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// setConnections lets the database name take connections or not, through
// the superuser at adminURL; refusing them also ends the open ones.
func setConnections(t *testing.T, adminURL, name string, allow bool) {
	t.Helper()
	// A name is not a bind parameter: quoted as an identifier by the server.
	stmt := queryIn(t, adminURL, "select format('alter database %I allow_connections '||$2, $1::text)", name, strconv.FormatBool(allow))
	sqlIn(t, adminURL, stmt)
	if !allow {
		sqlIn(t, adminURL, "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", name)
	}
}
