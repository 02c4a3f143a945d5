package console

import (
	"context"
	"net/http"
	"strconv"

	"github.com/paygate/gateway/internal/console/books"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
)

// The console's own audit trail, for the auditor (the journal and verify
// are internal/console/books').

// merchantOfQuery resolves ?shopNo=; nil with no error when none is given.
func (s *Server) merchantOfQuery(ctx context.Context, shop string) (*merchant.Merchant, error) {
	return books.MerchantOfQuery(ctx, s.cfg.Merchants, shop)
}

type trailData struct {
	Entries    []auditEntry
	Next       string
	PendingFor string
}

const trailPageMax = 100

func (s *Server) trail(w http.ResponseWriter, r *http.Request, sess *session) {
	before, err := host.QueryInt(r, "before", 0, 1<<62, 0)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	es, err := s.store.AuditTrail(r.Context(), int64(before), trailPageMax)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	for i := range es {
		es[i].Shown = shownOutcome(es[i], s.now())
	}
	d := trailData{Entries: es, PendingFor: strconv.Itoa(int(auditPendingFor.Minutes())) + " minutes"}
	if len(es) == trailPageMax {
		d.Next = "/audit/trail?before=" + strconv.FormatInt(es[len(es)-1].ID, 10)
	}
	s.render(w, r, http.StatusOK, "trail", "Console audit trail", d)
}
