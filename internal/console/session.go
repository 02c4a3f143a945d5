package console

import (
	"context"
	"net/http"
	"time"

	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/host"
)

// Sessions are server-side (console_sessions): the cookie carries 32 random
// bytes, the table their SHA-256. A session ends at its absolute expiry
// (SessionMax after login) or after IdleTimeout without a request, whichever
// comes first, and at logout (docs/console.md, "Sessions").
const (
	sessionCookie = "__Host-console-session"
	loginCookie   = "__Host-console-login" // the login form's CSRF token, before any session
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
)

// setCookie sets a host-only, Secure, HttpOnly, SameSite=Strict cookie
// that ends with the browser (the server decides the session's life).
func setCookie(w http.ResponseWriter, name, value string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
}

func clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
}

func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil || len(c.Value) > 100 {
		return ""
	}
	return c.Value
}

type ctxKey int

const (
	userKey ctxKey = iota
)

// session is the signed-in user of a request and its CSRF token.
type session struct {
	user *User
	csrf string
}

func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(userKey).(*session)
	return s
}

// loadSession resolves the session cookie; nil when there is no live
// session.
func (s *Server) loadSession(r *http.Request) (*session, error) {
	tok := cookieValue(r, sessionCookie)
	if tok == "" {
		return nil, nil
	}
	u, err := s.store.touchSession(r.Context(), auth.TokenHash(tok), s.now(), s.cfg.IdleTimeout)
	if err != nil || u == nil || (s.cfg.HouseOnly && u.Role.merchantRole()) {
		return nil, err
	}
	return &session{user: u, csrf: auth.CSRFToken(tok)}, nil
}

// startSession makes a session for user and sets its cookie, after
// dropping any session the browser had (no session fixation).
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, user int64) error {
	if old := cookieValue(r, sessionCookie); old != "" {
		if err := s.store.DeleteSession(r.Context(), auth.TokenHash(old)); err != nil {
			return err
		}
	}
	tok, err := auth.NewToken()
	if err != nil {
		return err
	}
	now := s.now()
	if err := s.store.PurgeSessions(r.Context(), now, s.cfg.IdleTimeout); err != nil {
		return err
	}
	if err := s.store.CreateSession(r.Context(), auth.TokenHash(tok), user, now, now.Add(s.cfg.SessionMax), host.ClientAddr(r)); err != nil {
		return err
	}
	setCookie(w, sessionCookie, tok)
	return nil
}

func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, userKey, s)
}
