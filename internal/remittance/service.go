package remittance

import (
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Service is the remittance domain on a ledger.
type Service struct {
	l    *ledger.Ledger
	cell string // the cell's name ("": no cells), carried by the tx ids minted
}

// RemitPrefix starts every remittance id (rmt_ and 20 of [a-z0-9]).
const RemitPrefix = "rmt_"

// InCell makes s mint remittance ids of cell name (rmt_<cell>…), so that
// the rail's reports, which name only the id, are routed to the cell
// without a lookup (docs/scaling.md, "Ids"). Call it once, before the
// service is used (internal/app/services).
func (s *Service) InCell(name string) { s.cell = name }

// New returns the remittances of l.
func New(l *ledger.Ledger) *Service { return &Service{l: l} }

func errRemitNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonRemittance, "remittance not found")
}
