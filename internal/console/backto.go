package console

import (
	"net/http"
	"net/url"
)

// A page that answers a POST (a refused form, a deposit's confirmation, a
// key shown once) leaves the browser on the POST's URL. Opening that URL
// again (from the address bar, a bookmark, a copied link) is a GET, which
// no action answers: it would be the 404 page. These send it back, 303, to
// the page the form is on, never doing the action; the permission is the
// action's own, so a GET tells nobody more than the POST would.
func backTo(page func(r *http.Request) string) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, _ *session) {
		http.Redirect(w, r, page(r), http.StatusSeeOther)
	}
}

func eventPagePath(r *http.Request) string {
	return "/events/" + url.PathEscape(r.PathValue("eventID"))
}

func usersPagePath(*http.Request) string { return "/users" }
