// Package host is what the console's page packages (internal/console/house,
// internal/console/books) are given by the console that serves them: a
// route guarded by a role and the CSRF check, a page rendered in the
// shared layout, the shared error page and the domain's error answered as
// every page answers it, the audit trail's rows, the clock. The console
// (internal/console) implements Host; a page package imports this leaf,
// never the console, so the pages are cut into packages of one concern
// without an import cycle and without a second copy of the guard, the
// layout or the trail (docs/console.md, "Where the code is").
package host

import (
	"io/fs"
	"net/http"
	"time"
)

// Perm is one thing a page or an action needs; the console's table says
// which roles have it (internal/console/roles.go).
type Perm int

const (
	PermMerchantRead Perm = iota // balances, cards, bill, events, statement
	PermCardWrite                // freeze, unfreeze, cancel
	PermReplay                   // replay a webhook event
	PermOperate                  // merchants, FX, stuck work
	PermAudit                    // journal, verify, the audit trail
	PermSignedIn                 // anyone signed in (logout)
	PermUsers                    // a merchant's console users: list, create, disable, enable, reset a password
	PermHouseUsers               // the house's console users (operators, auditors): the same actions
	PermCloses                   // the closed periods: the house's all, a merchant's admin and finance their own
)

// User is the signed-in user of a request, as a page sees it.
type User struct {
	ID         int64
	Login      string
	Role       string // the console's role name (admin, finance, readonly, operator, auditor)
	MerchantID int64  // 0 for the house's users
	ShopNo     string
	// House is true for the house's roles (operator, auditor), false for
	// a merchant's.
	House bool
}

// Handler is a page's or an action's handler, called once the guard has
// let the request through: u is the session's user.
type Handler func(w http.ResponseWriter, r *http.Request, u *User)

// Intent is an action's committed 'pending' row of the audit trail
// (internal/console/audit_intent.go), resolved once after the action.
type Intent interface {
	// Finish resolves the row from the action's error: nil is 'ok',
	// anything else 'failed' with its code and text. merchant and target
	// fill in what the intent could not name yet (0 and "" leave them);
	// more is the result.
	Finish(err error, merchant int64, target, more string)
	// Refuse resolves the row as refused by the console itself.
	Refuse(more string)
}

// Host is the console serving a page package.
type Host interface {
	// Handle registers pattern (http.ServeMux's syntax) behind the guard:
	// a live session whose role has p and, for anything but GET and HEAD,
	// the session's CSRF token, then the checks of every field. It is the
	// console's one route table, which the CSRF test walks.
	Handle(pattern string, p Perm, h Handler)
	// LimitBody lets a POST to path carry up to bytes (an uploaded file)
	// instead of a form's bound.
	LimitBody(path string, bytes int64)
	// Pages adds the page package's templates (each defines "content" for
	// the shared layout), named by their file names without .html; a name
	// the console already has is an error.
	Pages(fsys fs.FS) error
	// Allows says whether u's role has p (a page showing a form only to
	// those who may send it).
	Allows(u *User, p Perm) bool

	// Render writes page in the layout, through a buffer.
	Render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any)
	// Fail answers the shared error page with msg.
	Fail(w http.ResponseWriter, r *http.Request, status int, msg string)
	// NotFound is the one answer for what does not exist and what is
	// another merchant's.
	NotFound(w http.ResponseWriter, r *http.Request)
	// Internal logs err and answers 500 without its detail.
	Internal(w http.ResponseWriter, r *http.Request, err error)
	// DomainError answers a domain's error: 4xx with its message for the
	// user's mistake or the object's state, 503 for overload, else 500.
	DomainError(w http.ResponseWriter, r *http.Request, err error)

	// Record writes a row of the audit trail that goes with no action (a
	// refusal, a read, an upload's verdict) for the request's user.
	Record(r *http.Request, outcome string, merchant int64, action, target, detail string)
	// Begin commits an action's 'pending' row before the action; false
	// after answering 503 (the action must not run).
	Begin(w http.ResponseWriter, r *http.Request, merchant int64, action, target, detail string) (Intent, bool)

	// Now is the console's clock, in UTC.
	Now() time.Time
}

// BackTo answers a GET of an action's URL (a page left on a POST's URL,
// opened again) with a 303 to the page the form is on, never doing the
// action (internal/console/backto.go).
func BackTo(page func(r *http.Request) string) Handler {
	return func(w http.ResponseWriter, r *http.Request, _ *User) {
		http.Redirect(w, r, page(r), http.StatusSeeOther)
	}
}

// Refresher is a page's data that asks to be reloaded while it changes
// (a verify run going): the layout reloads it after RefreshSeconds without
// JavaScript; 0 is not at all.
type Refresher interface{ RefreshSeconds() int }
