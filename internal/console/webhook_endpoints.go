package console

import (
	"net/http"
	"strings"

	"github.com/paygate/gateway/internal/delivery"
)

// The merchant's webhook endpoints (docs/callbacks.md, "Webhook
// endpoints"): endpoint one (the default URL) and the others, with the
// event types each receives and whether it is enabled. Read-only here: the
// changes are the API's (/shop/webhook/endpoints) and the operator's
// (`gateway webhook endpoint …`), where a new secret can be shown once;
// the console would need a step-up and an audit intent per change, left
// for when the console's packages are split. No secret is ever shown.

type endpointsData struct {
	Endpoints []endpointRow
	Max       int
}

type endpointRow struct {
	delivery.Endpoint
	Types string // "all" or the list, comma-separated
}

func (s *Server) webhookEndpoints(w http.ResponseWriter, r *http.Request, sess *session) {
	list, err := s.cfg.Deliveries.Endpoints(r.Context(), sess.user.MerchantID)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	d := endpointsData{Max: delivery.EndpointsMax}
	for _, e := range list {
		row := endpointRow{Endpoint: e, Types: "all"}
		if e.EventTypes != nil {
			row.Types = strings.Join(e.EventTypes, ", ")
		}
		d.Endpoints = append(d.Endpoints, row)
	}
	s.render(w, r, http.StatusOK, "webhook_endpoints", "Webhook endpoints", d)
}
