package remittance

import (
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Service is the remittance domain on a ledger.
type Service struct {
	l *ledger.Ledger
}

// New returns the remittances of l.
func New(l *ledger.Ledger) *Service { return &Service{l: l} }

func errRemitNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonRemittance, "remittance not found")
}
