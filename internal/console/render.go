package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the parsed templates, one set per page (each defines
// "content"), and the embedded static files under their hashed URLs.
type pages struct {
	base   *template.Template // the layout and the helpers, which each page clones
	set    map[string]*template.Template
	assets map[string]string // "console.css" -> "/static/console.3f2a1b0c.css"
	files  map[string][]byte // hashed URL -> content
}

func loadPages() (*pages, error) {
	p := &pages{set: map[string]*template.Template{}, assets: map[string]string{}, files: map[string][]byte{}}
	err := fs.WalkDir(staticFS, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css")) {
			return err
		}
		b, err := staticFS.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		base := path.Base(name)
		ext := path.Ext(base)
		url := "/static/" + strings.TrimSuffix(base, ext) + "." + hex.EncodeToString(sum[:4]) + ext
		p.assets[base], p.files[url] = url, b
		return nil
	})
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		"asset": func(name string) (string, error) {
			if u, ok := p.assets[name]; ok {
				return u, nil
			}
			return "", fmt.Errorf("console: no static file %s", name)
		},
		"money": money,
		"ts":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
		"day":   func(t time.Time) string { return t.UTC().Format(postings.DayLayout) },
		"add":   func(a, b int) int { return a + b },
		"tsp": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04:05")
		},
		"deref":     func(p *int) int { return *p },
		"derefs":    func(p *string) string { return *p },
		"hex":       func(h postings.Hash) string { return h.String() },
		"shorthash": shortHash,
	}
	if p.base, err = template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"); err != nil {
		return nil, err
	}
	return p, p.add(templateFS)
}

// add parses each templates/*.html of fsys but the layout as a page of its
// own on a clone of the layout: the console's pages and a page package's
// (host.Host.Pages). A name already taken is an error, as two pages of one
// name would shadow each other.
func (p *pages) add(fsys fs.FS) error {
	names, err := fs.Glob(fsys, "templates/*.html")
	if err != nil {
		return err
	}
	// templates/partials/*.html are no pages: the pieces a package's pages
	// share, parsed into each of them (books' four reconciliation pages).
	partials, err := fs.Glob(fsys, "templates/partials/*.html")
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		name := strings.TrimSuffix(path.Base(n), ".html")
		if _, taken := p.set[name]; taken {
			return fmt.Errorf("console: two pages named %s", name)
		}
		t, err := template.Must(p.base.Clone()).ParseFS(fsys, append(partials[:len(partials):len(partials)], n)...)
		if err != nil {
			return err
		}
		p.set[name] = t
	}
	return nil
}

// view is what every page's template gets.
type view struct {
	Title string
	User  *User
	CSRF  string
	Nav   string // the current section, for the menu
	Data  any
	// Refresh, when not 0, reloads the page after that many seconds
	// without JavaScript (a <meta> inside <noscript>: with JavaScript htmx
	// polls instead).
	Refresh int
	// CellsDown are the cells a page over cells could not read or write
	// (cells.go): named above the page, which shows the rest.
	CellsDown []string
}

// render writes a page through a buffer, so that a template error is a
// clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	t, ok := s.pages.set[page]
	if !ok {
		s.internal(w, r, fmt.Errorf("console: no page %s", page))
		return
	}
	v := view{Title: title, Data: data, Nav: page, CellsDown: cellsDown(r.Context())}
	if rf, ok := data.(host.Refresher); ok {
		v.Refresh = rf.RefreshSeconds()
	}
	if sess := sessionOf(r.Context()); sess != nil {
		v.User, v.CSRF = sess.user, sess.csrf
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		s.internal(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail answers an error page with a message for the user.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", http.StatusText(status), msg)
}

// notFound is the one answer for what does not exist and what belongs to
// another merchant: the same status and the same page.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, "Not found.")
}

// internal logs an unexpected error and answers 500 without its detail.
func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	s.cfg.Log.Error("console request failed", "path", r.URL.Path, "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte("internal error\n"))
}

// domainError answers a domain's error: the user's mistake or the object's
// state as 4xx with its message, anything else as 500.
func (s *Server) domainError(w http.ResponseWriter, r *http.Request, err error) {
	switch postings.ErrorCode(err) {
	case postings.ENOTFOUND:
		s.notFound(w, r)
	case postings.EINVALID:
		s.fail(w, r, http.StatusBadRequest, postings.AsError(err).Error())
	case postings.ESTATE, postings.ECONFLICT, postings.EFORBIDDEN, postings.ELIMIT, postings.EINSUFFICIENT:
		s.fail(w, r, http.StatusConflict, postings.AsError(err).Error())
	case postings.EUNAVAILABLE:
		w.Header().Set("Retry-After", "1")
		s.fail(w, r, http.StatusServiceUnavailable, "The gateway is busy; try again in a moment.")
	default:
		s.internal(w, r, err)
	}
}

// serveStatic answers the embedded files under their hashed URLs, cached
// for a year (the URL changes with the content).
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	b, ok := s.pages.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	ct := "text/css; charset=utf-8"
	if strings.HasSuffix(r.URL.Path, ".js") {
		ct = "text/javascript; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(b)
}
