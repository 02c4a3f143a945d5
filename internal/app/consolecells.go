package app

import (
	"net/http"
	"net/url"
	"runtime"
	"strings"

	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/merchant"
)

// The web console over cells (docs/scaling.md, "The console over cells").
// Each cell has its own console on its own database, built as the one
// console without cells is; the house's users (operators, auditors), their
// sessions, TOTP and audit rows live in the home cell, so an operator signs
// in once; a merchant's users live in the merchant's cell (a move carries
// them). A router in front sends each request to the console of the cell
// whose data it shows:
//
//   - a sign-in (POST /login) by the shop number of its form: the house's
//     (none) to the home cell, a merchant's to the merchant's cell;
//   - a merchant's user's pages by the shop number the router put in a
//     cookie of its own at sign-in (a routing hint only: the session is
//     looked up in the cell it leads to, so a changed cookie leads to a
//     cell that has no such session, and to the login page);
//   - an operator's page of one merchant (/operator/merchants/{shopNo}/…,
//     /audit/journal/{shopNo}/…, /audit/journal?shopNo=, /audit/statement?shopNo=)
//     to that merchant's cell, to a console whose users are the home
//     cell's (HouseOnly); so are a merchant's adjustments
//     (/house/adjustments?shopNo=, a proposal's and a decision's form) and
//     a bank statement's reconciliation (POST /audit/bank, by the shop
//     number of its upload);
//   - anything else to the home cell's console, whose operator's lists and
//     data pages cover every cell (consoledata.go).
//
// A merchant the directory marks moving answers the "moving" page (503,
// Retry-After); an unknown shop number goes to the home cell, which
// answers it as one console does.
type consoleRouter struct {
	dir  *cells.Cache
	home *console.Server
	// own are the cells' consoles with their own users; house those whose
	// users are the home cell's (the home cell's is its own).
	own, house map[string]*console.Server
}

// adjustmentsPath is internal/console/books' adjustments page.
const adjustmentsPath = "/house/adjustments"

// shopCookie is the router's routing hint for a merchant's user: the shop
// number signed in to. Host-only, Secure, HttpOnly, SameSite=Strict as the
// session's (internal/console/session.go).
const shopCookie = "__Host-console-shop"

// formBytesMax bounds what the router reads of a form to find its shop
// number (the console's own bound of a form).
const formBytesMax = 64 << 10

// consoleOverCells builds every cell's console and the router in front.
func (a *App) consoleOverCells() (http.Handler, error) {
	cr := &consoleRouter{dir: a.directory, own: map[string]*console.Server{}, house: map[string]*console.Server{}}
	home := a.cells[0]
	// One bound of the argon2 hashes at once for the process, as one
	// console has: not one per cell's console.
	slots := make(chan struct{}, runtime.NumCPU())
	for i, c := range a.cells {
		cfg := a.consoleConfig(c.services, c.sealer)
		cfg.HashSlots = slots
		if i == 0 {
			a.overCells(&cfg) // consoledata.go
		}
		own, err := console.New(cfg)
		if err != nil {
			return nil, err
		}
		cr.own[c.id.Name] = own
		if i == 0 {
			cr.home, cr.house[c.id.Name] = own, own
			continue
		}
		// The home cell's users (and its sealer, which opens their TOTP
		// secrets) over this cell's data.
		cfg.Users, cfg.Sealer, cfg.HouseOnly = home.store.DB.DB, home.sealer, true
		if cr.house[c.id.Name], err = console.New(cfg); err != nil {
			return nil, err
		}
	}
	return cr, nil
}

func (cr *consoleRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/login" {
		shop := formShop(r)
		if !merchant.IsShopNo(shop) {
			// The house's sign-in (or a shop number of no shape, which
			// the home cell refuses as one console does).
			http.SetCookie(w, &http.Cookie{Name: shopCookie, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
			cr.home.ServeHTTP(w, r)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: shopCookie, Value: shop, Path: "/", Secure: true, HttpOnly: true,
			SameSite: http.SameSiteStrictMode})
		cr.toCell(w, r, shop, cr.own)
		return
	}
	if c, err := r.Cookie(shopCookie); err == nil && merchant.IsShopNo(c.Value) {
		cr.toCell(w, r, c.Value, cr.own)
		return
	}
	if r.Method == http.MethodPost && (r.URL.Path == adjustmentsPath || strings.HasPrefix(r.URL.Path, adjustmentsPath+"/")) {
		// A proposal names its merchant, a decision carries it hidden.
		cr.toCell(w, r, formShop(r), cr.house)
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == bankStatementPath {
		// The console's FormValue reads the query after the body.
		shop := uploadShop(r) // consoleupload.go
		if shop == "" {
			shop = r.URL.Query().Get("shopNo")
		}
		cr.toCell(w, r, shop, cr.house)
		return
	}
	if shop := pageShop(r); shop != "" {
		cr.toCell(w, r, shop, cr.house)
		return
	}
	cr.home.ServeHTTP(w, r)
}

// toCell serves r by the console among servers of the cell the directory
// places shop in.
func (cr *consoleRouter) toCell(w http.ResponseWriter, r *http.Request, shop string, servers map[string]*console.Server) {
	if !merchant.IsShopNo(shop) { // no merchant's: never a directory query
		cr.home.ServeHTTP(w, r)
		return
	}
	e, found, err := cr.dir.Lookup(r.Context(), shop)
	switch {
	case err != nil:
		cr.home.DirectoryDown(w, r, cells.CacheTTL)
	case !found || servers[e.Cell] == nil:
		cr.home.ServeHTTP(w, r)
	case e.State != cells.StateActive:
		cr.home.Moving(w, r, cells.CacheTTL)
	default:
		servers[e.Cell].ServeHTTP(w, r)
	}
}

// pageShop is the merchant an operator's or auditor's page is of, from
// its URL; "" for a page of no one merchant.
func pageShop(r *http.Request) string {
	for _, prefix := range []string{"/operator/merchants/", "/audit/journal/"} {
		if rest, ok := strings.CutPrefix(r.URL.Path, prefix); ok {
			shop, _, _ := strings.Cut(rest, "/")
			return shop
		}
	}
	// The auditor's pages of one merchant named in the query: its journal
	// and its statement.
	if r.URL.Path == "/audit/journal" || r.URL.Path == "/audit/statement" || r.URL.Path == adjustmentsPath {
		return r.URL.Query().Get("shopNo")
	}
	return ""
}

// formShop is the shop number of a form (a sign-in's, an adjustment's),
// trimmed as the console trims it. It puts back the body it reads.
func formShop(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	body, ok := peekBody(r, formBytesMax) // router.go
	if !ok {
		return ""
	}
	// As http.Request.ParseForm reads it for the console: the pairs that
	// parse, whatever a malformed one after them.
	v, _ := url.ParseQuery(string(body))
	return strings.TrimSpace(v.Get("shopNo"))
}
