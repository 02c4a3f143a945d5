package api

import (
	"log/slog"
	"net/http"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// The internal network API and the sandbox's handlers are api/partner's,
// and partner imports api, so this package's own tests cannot import it
// (an import cycle). partner_plug_test.go, of the external test package
// api_test (which may import both), sets these two hooks before any test
// runs, so that the tests here of the gateway as served (the network's
// messages beside /shop on one ledger, the sandbox, the metrics of both
// listeners) see both of its surfaces. partner's own tests hold its
// handlers against fakes.

// PartnerDeps are partner.Deps, with the domains' interfaces as any
// (partner's interfaces cannot be named here).
type PartnerDeps struct {
	Log           *slog.Logger
	Network       any
	Rails         any
	Token         string
	Limits        Limits
	Metrics       *httpserve.Metrics
	MetricsToken  string
	SandboxCards  any
	SandboxRemit  any
	SandboxLedger ReadKeys
}

// PartnerServer is partner.NewServer, PartnerSandbox partner.NewSandbox,
// PartnerSandboxMessageID partner.SandboxMessageID.
var (
	PartnerServer           func(PartnerDeps) http.Handler
	PartnerSandbox          func(PartnerDeps) *SandboxHandlers
	PartnerSandboxMessageID func(m *merchant.Merchant, idem *ledger.Idempotency) string
)

// NewInternalServer is the internal API's handler, as serve builds it.
func NewInternalServer(d PartnerDeps) http.Handler { return PartnerServer(d) }

// newSandbox is the sandbox's handlers on the given services: network and
// rails the internal API's, cards, remit and keys the sandbox's reads.
func newSandbox(cards, network, rails, remit any, keys ReadKeys) *SandboxHandlers {
	return PartnerSandbox(PartnerDeps{Network: network, Rails: rails, SandboxCards: cards, SandboxRemit: remit, SandboxLedger: keys})
}
