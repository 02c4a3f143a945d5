// Package console is the gateway's web console for merchants' finance
// teams, operators and auditors (docs/console.md): server-rendered pages on
// their own HTTPS listener, readable without JavaScript, enhanced by an
// embedded htmx. It signs users in with argon2id passwords (and TOTP for
// the house's roles), keeps sessions in PostgreSQL, checks a CSRF token on
// every form and the user's role on every request, records every change in
// an append-only audit trail, and runs the same domain commands as the API
// and the operator CLI.
package console

import (
	"database/sql"
	"log/slog"
	"net/http"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/reconcile"
)

// Config is what the console is built from. The zero durations and counts
// take the defaults of docs/console.md.
type Config struct {
	DB *sql.DB
	// Users is the database of the console's own tables (users, sessions,
	// login attempts, the audit trail); nil: DB. Over cells the house's
	// users are the home cell's, while a cell's pages read that cell's DB
	// (docs/scaling.md, "The console over cells").
	Users *sql.DB
	// HouseOnly serves the house's users only: a merchant's user's
	// session is as none. A cell's pages for the home cell's operators
	// are such a console: its Users are the home cell's, whose merchants'
	// users must not reach another cell's data through it.
	HouseOnly   bool
	Sealer      *merchant.Sealer // opens the TOTP secrets
	Log         *slog.Logger
	Ledger      Ledger
	Merchants   Merchants
	Bills       Bills
	Audit       Audit
	Cards       Cards
	Deliveries  Deliveries
	Rates       Rates
	Remittances Remittances
	Holds       Holds // the operator's holds near expiry (*network.Service)
	// Deposits books the operator's deposits with their bank reference;
	// nil: internal/deposit on Ledger, when it is the ledger.
	Deposits Deposits
	// Adjustments are the corrections' proposals and decisions; nil:
	// internal/adjustment on Ledger, when it is the ledger.
	Adjustments Adjustments
	// Settlements are the network's clearings that settlement
	// reconciliation reads (*network.Service), as reconcile declares them.
	Settlements reconcile.SettlementSource
	Rail        reconcile.RailSource // the remittances' ends the rail report page reads (internal/console/books); nil: no page
	// Refunds are the network's refunds the refund file page reads
	// (internal/console/books); nil: the page fails.
	Refunds reconcile.RefundSource
	// Sanctions loads the sanctions list (the CLI's sanctions load); nil:
	// Remittances, when it is the remittance service, which does both.
	Sanctions Sanctions
	// CallbackAllow is the allow list a merchant's callback URL is checked
	// against (GATEWAY_CALLBACK_ALLOW_*), as the API and the CLI check it.
	CallbackAllow callbackurl.AllowList
	// Now is the clock (tests move it to expire sessions); nil: time.Now.
	Now func() time.Time

	IdleTimeout     time.Duration // a session ends after this without a request (30 min)
	SessionMax      time.Duration // and this long after login whatever the activity (12 h)
	LockoutFailures int           // consecutive failed logins that lock a user (5)
	LockoutFor      time.Duration // how long a lockout lasts (15 min)
	AddressFailures int           // failed logins from one address within LockoutFor that refuse it (20)
	// HashConcurrency bounds the password checks hashing at once (lockout.go);
	// 0: one per CPU.
	HashConcurrency int
	// HashSlots, when set, are those places shared with other consoles of
	// the process (over cells, every cell's console: the bound is the
	// process's, not a cell's); nil: the console's own, HashConcurrency.
	HashSlots chan struct{}
}

// The defaults (docs/console.md).
const (
	IdleTimeoutDefault     = 30 * time.Minute
	SessionMaxDefault      = 12 * time.Hour
	LockoutFailuresDefault = 5
	LockoutForDefault      = 15 * time.Minute
	AddressFailuresDefault = 20
	formBytesMax           = 64 << 10
)

// Server is the console's handler.
type Server struct {
	cfg   Config
	store *consoleStore
	mux   *routeMux
	pages *pages
	// hashSlots are the places of the password checks hashing at once
	// (lockout.go).
	hashSlots chan struct{}
	// checker checks passwords and codes with the lockout (lockout.go).
	checker *auth.Checker
	// bodyLimits are the paths whose POST is a file, with its bound
	// (host.Host.LimitBody); any other POST is a form of formBytesMax.
	bodyLimits map[string]int64
}

// New builds the console.
func New(cfg Config) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = IdleTimeoutDefault
	}
	if cfg.SessionMax <= 0 {
		cfg.SessionMax = SessionMaxDefault
	}
	if cfg.LockoutFailures <= 0 {
		cfg.LockoutFailures = LockoutFailuresDefault
	}
	if cfg.LockoutFor <= 0 {
		cfg.LockoutFor = LockoutForDefault
	}
	if cfg.AddressFailures <= 0 {
		cfg.AddressFailures = AddressFailuresDefault
	}
	if cfg.HashConcurrency <= 0 {
		cfg.HashConcurrency = hashSlotsDefault()
	}
	defaultFinance(&cfg)
	if sl, ok := cfg.Remittances.(Sanctions); ok && cfg.Sanctions == nil {
		cfg.Sanctions = sl
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	if cfg.Users == nil {
		cfg.Users = cfg.DB
	}
	s := &Server{cfg: cfg, store: &consoleStore{Store: store.New(bun.NewDB(cfg.Users, pgdialect.New())), merchants: cfg.Merchants}, mux: newRouteMux(), pages: p,
		hashSlots: cfg.HashSlots, bodyLimits: map[string]int64{}}
	if s.hashSlots == nil {
		s.hashSlots = make(chan struct{}, cfg.HashConcurrency)
	}
	if cfg.HouseOnly && cfg.Adjustments != nil { // cells.go
		s.cfg.Adjustments = cellAdjustments{Adjustments: cfg.Adjustments, home: s.store.Store, cell: bun.NewDB(cfg.DB, pgdialect.New())}
	}
	s.checker = s.newChecker()
	s.routes()
	if err := s.register(); err != nil { // pagehost.go
		return nil, err
	}
	return s, nil
}

// ServeHTTP applies what every answer gets (the security headers, the
// cross-origin refusal of unsafe methods, the bound of a form) before the
// routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Only the embedded files: no inline script or style anywhere, so no
	// nonce either (docs/console.md, "Content-Security-Policy").
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Strict-Transport-Security", "max-age=31536000")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// A browser says where a request comes from: one from another
		// site is refused before any token is looked at.
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			s.fail(w, r, http.StatusForbidden, "This form came from another site.")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "null" && o != "https://"+r.Host && o != "http://"+r.Host {
			s.fail(w, r, http.StatusForbidden, "This form came from another site.")
			return
		}
		limit, file := s.bodyLimits[r.URL.Path]
		if !file {
			limit = formBytesMax
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	s.mux.ServeHTTP(w, withCellsDown(r)) // cells.go
}

// guard wraps a page: the request needs a live session whose role has p,
// and, for anything but GET, the session's CSRF token. Without a session a
// browser is sent to the login page (an htmx request is told to go there).
func (s *Server) guard(p perm, h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.loadSession(r)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		if sess == nil {
			if r.Header.Get("HX-Request") == "true" {
				w.Header().Set("HX-Redirect", "/login")
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		r = r.WithContext(withSession(r.Context(), sess))
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			// The body is read before the token is looked at: one that
			// is too large or stalled is said so, not taken for a missing
			// token (formread.go).
			if !s.parseForm(w, r) {
				return
			}
			tok := r.Header.Get(csrfHeader)
			if tok == "" {
				tok = r.PostFormValue(csrfField)
			}
			if !auth.SameToken(tok, sess.csrf) {
				s.fail(w, r, http.StatusForbidden, "This form has no valid CSRF token. Reload the page and try again.")
				return
			}
		}
		if !sess.user.Role.may(p) {
			if r.Method != http.MethodGet {
				s.record(r, sess, "refused", 0, actionOf(r), r.URL.Path, "role "+string(sess.user.Role))
			}
			s.fail(w, r, http.StatusForbidden, "Your role does not allow this.")
			return
		}
		if !s.fieldsAdmitted(w, r) { // formtext.go
			return
		}
		h(w, r, sess)
	}
}

// actionOf names a refused request in the audit trail.
func actionOf(r *http.Request) string { return "request.refused" }
