package console

import (
	"io/fs"
	"net/http"
	"time"

	"github.com/paygate/gateway/internal/console/books"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/console/house"
)

// pageHost is the console as the page packages see it (host.Host): their
// routes go through the same guard and into the same route table
// (routemux.go, which the CSRF test walks), their pages into the same
// layout, their rows into the same audit trail. A type of its own, so that
// the console's exported API stays New and ServeHTTP.
type pageHost struct{ s *Server }

var _ host.Host = pageHost{}

func (h pageHost) Handle(pattern string, p host.Perm, fn host.Handler) {
	h.s.mux.HandleFunc(pattern, h.s.guard(p, func(w http.ResponseWriter, r *http.Request, sess *session) {
		fn(w, r, sess.user.page())
	}))
}

func (h pageHost) LimitBody(path string, bytes int64) { h.s.bodyLimits[path] = bytes }

func (h pageHost) Pages(fsys fs.FS) error { return h.s.pages.add(fsys) }

func (h pageHost) Allows(u *host.User, p host.Perm) bool { return Role(u.Role).may(p) }

func (h pageHost) Render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	h.s.render(w, r, status, page, title, data)
}

func (h pageHost) Fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.s.fail(w, r, status, msg)
}

func (h pageHost) NotFound(w http.ResponseWriter, r *http.Request) { h.s.notFound(w, r) }

func (h pageHost) Internal(w http.ResponseWriter, r *http.Request, err error) {
	h.s.internal(w, r, err)
}

func (h pageHost) DomainError(w http.ResponseWriter, r *http.Request, err error) {
	h.s.domainError(w, r, err)
}

// Record and Begin take the session the guard put in the request's context.
func (h pageHost) Record(r *http.Request, outcome string, merchant int64, action, target, detail string) {
	h.s.record(r, sessionOf(r.Context()), outcome, merchant, action, target, detail)
}

func (h pageHost) Begin(w http.ResponseWriter, r *http.Request, merchant int64, action, target, detail string) (host.Intent, bool) {
	a, ok := h.s.auditBegin(w, r, sessionOf(r.Context()), merchant, action, target, detail)
	if !ok {
		return nil, false
	}
	return a, true
}

func (h pageHost) Now() time.Time { return h.s.now() }

// page is the user as a page package sees it.
func (u *User) page() *host.User {
	return &host.User{ID: u.ID, Login: u.Login, Role: string(u.Role), MerchantID: u.MerchantID, ShopNo: u.ShopNo,
		House: !u.Role.merchantRole()}
}

// register adds the page packages to the console, each with its domains
// from the configuration.
func (s *Server) register() error {
	h := pageHost{s}
	c := &s.cfg
	err := house.Register(h, house.Deps{Ledger: c.Ledger, Merchants: c.Merchants, Cards: c.Cards, Deliveries: c.Deliveries,
		Remittances: c.Remittances, Rates: c.Rates, Holds: c.Holds, Deposits: c.Deposits, Sanctions: c.Sanctions,
		CallbackAllow: c.CallbackAllow, Console: s.store})
	if err != nil {
		return err
	}
	return books.Register(h, books.Deps{DB: c.DB, Log: c.Log, Ledger: c.Ledger, Merchants: c.Merchants, Bills: c.Bills,
		Audit: c.Audit, Adjustments: c.Adjustments, Settlements: c.Settlements, Rail: c.Rail, Refunds: c.Refunds,
		Trail: s.store})
}
