package api

import (
	"strings"

	"github.com/gin-gonic/gin"
)

// The sandbox's doors (docs/api.md, "The sandbox"). Its paths exist for a
// test merchant only: to anyone else — a live merchant, a wrong key, no
// key at all — every /shop/sandbox path, with any method, answers exactly
// what an unknown path answers (404 "no such endpoint", before anything is
// charged to a rate limit), so that the sandbox cannot be told from a path
// that does not exist. A test merchant then passes the authentication,
// rate limit and Idempotency-Key of every other /shop POST.

const sandboxPrefix = "/shop/sandbox/"

// SandboxHandlers answer the sandbox's paths: the internal API's commands
// on a test merchant's own objects, made by api/partner.NewSandbox with the
// internal API's decoders and answers. Who may ask is decided here.
type SandboxHandlers struct {
	Authorize, Capture, Reverse, Refund, Settle, Return gin.HandlerFunc
	// Clock and ClockAdvance are the test clock's (GET /shop/sandbox/clock,
	// POST /shop/sandbox/clock/advance); nil: no such routes.
	Clock, ClockAdvance gin.HandlerFunc
}

// addSandboxRoutes serves /shop/sandbox when its handlers are given; rate
// and post are the /shop group's rate limit and POST middleware, so that a
// merchant's bucket and its in-flight keys are one.
func addSandboxRoutes(r *gin.Engine, d Deps, rate, post gin.HandlerFunc) {
	h := d.Sandbox
	if h == nil {
		return
	}
	g := r.Group("/shop/sandbox", hideSandbox(d.Merchants), authenticate(d.Merchants, d.TrustedProxies, d.Now), rate)
	g.POST("/authorize", post, h.Authorize)
	g.POST("/capture", post, h.Capture)
	g.POST("/reverse", post, h.Reverse)
	g.POST("/refund", post, h.Refund)
	g.POST("/remittance/settle", post, h.Settle)
	g.POST("/remittance/return", post, h.Return)
	if h.Clock != nil && h.ClockAdvance != nil {
		g.GET("/clock", h.Clock)
		g.POST("/clock/advance", post, h.ClockAdvance)
	}
}

// hideSandbox answers a /shop/sandbox request as an unknown path unless it
// authenticates as a test merchant. It is the first handler of the
// sandbox's routes and of NoMethod (a GET of a POST path would otherwise be
// a 405, which tells that the path exists).
func hideSandbox(l Merchants) gin.HandlerFunc {
	notFound := handleNoRoute()
	return func(c *gin.Context) {
		if !strings.HasPrefix(c.Request.URL.Path, sandboxPrefix) || isTestMerchant(c, l) {
			return
		}
		// gin names the methods of a path (Allow) before NoMethod runs:
		// an unknown path has none.
		c.Writer.Header().Del("Allow")
		notFound(c)
	}
}

// isTestMerchant reports whether the request's credentials are a test
// merchant's. Whatever is wrong with them is not told here: authenticate
// tells a test merchant, who alone gets past this point.
func isTestMerchant(c *gin.Context, l Merchants) bool {
	if l == nil {
		return false
	}
	shopNo, err := credentialHeader(c.Request.Header, headerShopNo)
	if err != nil {
		return false
	}
	key, err := credentialHeader(c.Request.Header, headerPublicKey)
	if err != nil {
		return false
	}
	m, err := l.Authenticate(c.Request.Context(), shopNo, key)
	return err == nil && m.Test
}
