// Package house is the console's operator pages (docs/console.md,
// "Operator pages"): the merchants (list, create, disable and enable; one
// merchant's whitelist, KYB tier, limits, BIN access, callback URL,
// deposit and key roll), the FX rates, the BIN catalogue, the holds near
// expiry, the stuck work and the sanctions list. Each runs the domain
// command the CLI runs. The console serves them through host.Host: its
// guard (role and CSRF), its layout, its error page and its audit trail.
package house

import (
	"embed"
	"net/http"
	"net/url"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/console/host"
)

//go:embed templates/*.html
var templateFS embed.FS

// Deps are the domains the pages run on, each behind the small interface
// of its area (deps.go), and the console's own tables.
type Deps struct {
	Ledger      Ledger
	Merchants   Merchants
	Cards       Cards
	Deliveries  Deliveries
	Remittances Remittances
	Rates       Rates
	Holds       Holds
	Deposits    Deposits
	Sanctions   Sanctions // nil: the confirmation of an upload is a 500
	// CallbackAllow is the allow list a merchant's callback URL is
	// checked against, as the API and the CLI check it.
	CallbackAllow callbackurl.AllowList
	Console       Console
}

type pages struct {
	h host.Host
	d Deps
	// pendingLoads are the uploaded sanctions lists waiting for their
	// confirmation (sanctions_pending.go).
	pendingLoads pendingLoads
}

// Register adds the operator's pages to the console h: its templates and
// its routes, every one of them for the operator (host.PermOperate).
func Register(h host.Host, d Deps) error {
	if err := h.Pages(templateFS); err != nil {
		return err
	}
	s := &pages{h: h, d: d}
	op := func(pattern string, fn host.Handler) { h.Handle(pattern, host.PermOperate, fn) }
	op("GET /operator/merchants", s.merchantList)
	op("POST /operator/merchants", s.merchantCreate)
	op("POST /operator/merchants/{shopNo}/{action}", s.merchantStatus)
	op("GET /operator/rates", s.rates)
	op("POST /operator/rates", s.rateSet)
	op("GET /operator/stuck", s.stuck)
	op("GET /operator/merchants/{shopNo}", s.merchantPage)
	op("POST /operator/merchants/{shopNo}/whitelist", s.merchantWhitelist)
	op("POST /operator/merchants/{shopNo}/kyb", s.merchantKYB)
	op("POST /operator/merchants/{shopNo}/limits", s.merchantLimits)
	op("POST /operator/merchants/{shopNo}/bins", s.merchantBINAccess)
	op("POST /operator/merchants/{shopNo}/callback-url", s.merchantCallbackURL)
	op("POST /operator/merchants/{shopNo}/deposit", s.depositConfirm)
	op("POST /operator/merchants/{shopNo}/deposit/confirm", s.deposit)
	op("POST /operator/merchants/{shopNo}/roll-key", s.rollKey)
	// The actions' URLs opened with GET go back to their page (host.BackTo).
	op("GET /operator/merchants/{shopNo}/{action}", host.BackTo(merchantPagePath))
	op("GET /operator/merchants/{shopNo}/deposit/confirm", host.BackTo(merchantPagePath))
	op("GET /operator/holds", s.holds)
	op("GET /operator/bins", s.bins)
	op("POST /operator/bins", s.binUpsert)
	op("GET "+sanctionsPath, s.sanctionsPage)
	op("POST "+sanctionsPath, s.sanctionsUpload)
	op("POST "+sanctionsConfirmPath, s.sanctionsConfirm)
	op("GET "+sanctionsConfirmPath, host.BackTo(func(*http.Request) string { return sanctionsPath }))
	h.LimitBody(sanctionsPath, sanctionsUploadMax) // the sanctions list's file
	return nil
}

func merchantPagePath(r *http.Request) string {
	return "/operator/merchants/" + url.PathEscape(r.PathValue("shopNo"))
}
