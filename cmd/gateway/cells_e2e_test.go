package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger/pgtest"
)

// cellsGateway is an installation over two cells, a1 and b2, each a
// database of the test server; a1 holds the directory.
func cellsGateway(t *testing.T) (g *gateway, dbA, dbB string) {
	t.Helper()
	g = newGateway(t)
	dbA, dbB = pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	delete(g.env, "DATABASE_URL")
	g.env["GATEWAY_CELLS"] = "a1=" + dbA + ",b2=" + dbB
	return g, dbA, dbB
}

// The rows count looks for, by key (whole statements: no SQL is built).
var countQueries = map[string]string{
	"merchants shop_no":      "select count(*) from merchants where shop_no = $1",
	"cell_directory shop_no": "select count(*) from cell_directory where shop_no = $1",
	"cards card_no":          "select count(*) from cards where card_no = $1",
	"authorizations auth_id": "select count(*) from authorizations where auth_id = $1",
}

// count is how many rows of table have column = value in the database at
// url: where a request's effects landed.
func count(t *testing.T, url, table, column, value string) int {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), countQueries[table+" "+column], value).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// shopCall is one /shop request of a merchant, its status and envelope.
func (s *server) shopCall(method, path, shopNo, key, body string) (int, map[string]any) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url(path), strings.NewReader(body))
	req.Header.Set("X-Shop-No", shopNo)
	req.Header.Set("X-Public-Key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		s.t.Fatalf("%s %s: %q: %v", method, path, b, err)
	}
	delete(v, "requestId")
	return resp.StatusCode, v
}

// TestServeOverCells runs the real gateway over two cells: a database not
// made a cell is refused; `cells init` numbers them; merchants are created
// in the cell named or the emptiest and placed in the directory; each
// /shop request and each network message lands in its merchant's cell
// (read in each cell's database); an unknown shop, another cell's card and
// an id of no cell are answered as one gateway answers unknown ones.
func TestServeOverCells(t *testing.T) {
	t.Parallel()
	g, dbA, dbB := cellsGateway(t)
	g.mustFail("not a cell yet", "serve")
	g.mustFail("cells init", "merchant", "create", "--name", "Nowhere", "--currencies", "USD")

	var inited []struct {
		Name   string `json:"name"`
		Number int    `json:"number"`
	}
	if err := json.Unmarshal([]byte(g.mustRun("cells", "init")), &inited); err != nil || len(inited) != 2 ||
		inited[0].Name != "a1" || inited[0].Number != 1 || inited[1].Name != "b2" || inited[1].Number != 2 {
		t.Fatalf("cells init: %+v %v", inited, err)
	}
	g.mustRun("cells", "init") // again: nothing changes
	if out := strings.TrimSpace(g.mustRun("db", "url", "--cell", "b2")); out != dbB {
		t.Errorf("db url --cell b2: %q", out)
	}
	g.mustFail("--cell", "db", "url")

	create := func(args ...string) credentials {
		t.Helper()
		var c credentials
		out := g.mustRun(append([]string{"merchant", "create", "--currencies", "USD"}, args...)...)
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	mB := create("--name", "In b2", "--cell", "b2")
	mA := create("--name", "In a1") // a1 has none, b2 one: the emptiest
	if !strings.HasPrefix(mA.ShopNo, "SH1") || !strings.HasPrefix(mB.ShopNo, "SH2") {
		t.Errorf("shop numbers %s, %s: want cell 1's and cell 2's", mA.ShopNo, mB.ShopNo)
	}
	for _, m := range []struct {
		shop, in, notIn string
	}{{mA.ShopNo, dbA, dbB}, {mB.ShopNo, dbB, dbA}} {
		if count(t, m.in, "merchants", "shop_no", m.shop) != 1 || count(t, m.notIn, "merchants", "shop_no", m.shop) != 0 ||
			count(t, dbA, "cell_directory", "shop_no", m.shop) != 1 {
			t.Errorf("%s is not in exactly its cell and the directory", m.shop)
		}
	}
	g.mustFail("--cell", "merchant", "create", "--name", "Nowhere", "--currencies", "USD", "--cell", "zz")
	// The operator's commands find the merchant's cell in the directory.
	g.deposit(mA.ShopNo, "USD", "100.00")
	g.deposit(mB.ShopNo, "USD", "200.00")

	s := g.serve()
	addr := s.internalAddr()
	cardOf := func(m credentials, want string) string {
		t.Helper()
		status, v := s.shopCall("POST", "/shop/card/create", m.ShopNo, m.PublicKey, `{"bin":"453201","currency":"USD","amount":"10.00"}`)
		data, _ := v["data"].(map[string]any)
		cardNo, _ := data["cardNo"].(string)
		if status != 200 || !strings.HasPrefix(cardNo, want) || len(cardNo) != 24 {
			t.Fatalf("card create for %s: %d %v", m.ShopNo, status, v)
		}
		return cardNo
	}
	cardA, cardB := cardOf(mA, "crd_a1"), cardOf(mB, "crd_b2")
	if count(t, dbA, "cards", "card_no", cardA) != 1 || count(t, dbB, "cards", "card_no", cardB) != 1 ||
		count(t, dbA, "cards", "card_no", cardB) != 0 || count(t, dbB, "cards", "card_no", cardA) != 0 {
		t.Errorf("the cards are not each in its merchant's cell")
	}
	for _, m := range []credentials{mA, mB} {
		if status, v := s.shopCall("GET", "/shop/account", m.ShopNo, m.PublicKey, ""); status != 200 || v["code"] != float64(200) {
			t.Errorf("account of %s: %d %v", m.ShopNo, status, v)
		}
	}

	// Network messages route by the id's cell.
	authorize := func(cardNo string) string {
		t.Helper()
		r := g.run("network", "authorize", "--card-no", cardNo, "--amount", "1.00", "--currency", "USD", "--addr", addr)
		var v struct {
			AuthID   string `json:"authId"`
			Approved bool   `json:"approved"`
		}
		if r.err != nil || json.Unmarshal([]byte(r.stdout), &v) != nil || !v.Approved {
			t.Fatalf("authorize %s: %v %s %s", cardNo, r.err, r.stdout, r.stderr)
		}
		return v.AuthID
	}
	authA, authB := authorize(cardA), authorize(cardB)
	if !strings.HasPrefix(authA, "auth_a1") || !strings.HasPrefix(authB, "auth_b2") ||
		count(t, dbA, "authorizations", "auth_id", authA) != 1 || count(t, dbB, "authorizations", "auth_id", authB) != 1 {
		t.Errorf("authorizations %s, %s are not each in its card's cell", authA, authB)
	}
	g.mustRun("network", "clear", "--auth-id", authB, "--amount", "1.00", "--addr", addr)
	g.mustRun("network", "show", "--auth-id", authA, "--addr", addr)

	// What is no merchant's here is answered as one gateway answers it.
	unknownShop, unknownShopBody := s.shopCall("GET", "/shop/account", "SH9000000001", mA.PublicKey, "")
	wrongKey, wrongKeyBody := s.shopCall("GET", "/shop/account", mB.ShopNo, mA.PublicKey, "")
	if unknownShop != wrongKey || unknownShop != 401 || unknownShopBody["message"] != wrongKeyBody["message"] {
		t.Errorf("unknown shop %d %v; a wrong key %d %v", unknownShop, unknownShopBody, wrongKey, wrongKeyBody)
	}
	otherCell, otherBody := s.shopCall("GET", "/shop/card/info?cardNo="+cardB, mA.ShopNo, mA.PublicKey, "")
	noCard, noCardBody := s.shopCall("GET", "/shop/card/info?cardNo=crd_a1zzzzzzzzzzzzzzzzzz", mA.ShopNo, mA.PublicKey, "")
	if otherCell != noCard || otherBody["code"] != noCardBody["code"] || otherBody["message"] != noCardBody["message"] || otherBody["code"] == float64(200) {
		t.Errorf("another cell's card %d %v; no such card %d %v", otherCell, otherBody, noCard, noCardBody)
	}
	for _, id := range []string{"auth_zz0000000000000000000", "auth_b20000000000000000000"} {
		if r := g.run("network", "show", "--auth-id", id, "--addr", addr); r.code() != 1 || !strings.Contains(r.err.Error(), "1201") {
			t.Errorf("show %s: exit %d %v, want 1201 (no such authorization)", id, r.code(), r.err)
		}
	}

	// A merchant the directory marks moving (internal/cellmove's state) is
	// answered 503 with Retry-After once the router's cache has expired,
	// and served again once it is active; the other cell's merchant is
	// served throughout.
	setState := func(state string) {
		t.Helper()
		db, err := sql.Open("pgx", dbA)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("update cell_directory set state = $1 where shop_no = $2", state, mB.ShopNo); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(want int) http.Header {
		t.Helper()
		deadline := time.Now().Add(commandTimeout)
		for {
			req, _ := http.NewRequest("GET", s.url("/shop/account"), nil)
			req.Header.Set("X-Shop-No", mB.ShopNo)
			req.Header.Set("X-Public-Key", mB.PublicKey)
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == want {
				return resp.Header
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still answered %d, want %d", mB.ShopNo, resp.StatusCode, want)
			}
			time.Sleep(50 * time.Millisecond) // polling the condition, not waiting for it
		}
	}
	setState("moving")
	if h := waitFor(http.StatusServiceUnavailable); h.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	if status, _ := s.shopCall("GET", "/shop/account", mA.ShopNo, mA.PublicKey, ""); status != 200 {
		t.Errorf("the other cell's merchant: %d", status)
	}
	setState("active")
	waitFor(http.StatusOK)
	s.mustStop()

	// The cells' URLs swapped: serve stops at start, naming the cell.
	g.env["GATEWAY_CELLS"] = "a1=" + dbB + ",b2=" + dbA
	g.mustFail("cell a1: its database is cell b2", "serve")
	auditEachCell(g, dbA, dbB)
}

// auditEachCell verifies each cell's journal, with the command run as
// docs/scaling.md says: that cell's DATABASE_URL, GATEWAY_CELLS unset.
func auditEachCell(g *gateway, urls ...string) {
	g.t.Helper()
	for _, url := range urls {
		one := &gateway{t: g.t, env: map[string]string{}}
		for k, v := range g.env {
			one.env[k] = v
		}
		delete(one.env, "GATEWAY_CELLS")
		one.env["DATABASE_URL"] = url
		one.auditOK()
	}
}
