package partner

import (
	"context"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// Network is the card processor's side of the internal API
// (*network.Service). Errors: ENOTFOUND card or authorization, ESTATE
// authorization_closed, ELIMIT (the network bounds), ECONFLICT (a message
// id reused).
type Network interface {
	Authorize(ctx context.Context, req network.AuthRequest) (*network.AuthResult, error)
	Clear(ctx context.Context, req network.ClearRequest) (*network.HoldResult, error)
	Reverse(ctx context.Context, req network.ReverseRequest) (*network.HoldResult, error)
	Refund(ctx context.Context, req network.RefundRequest) (*network.RefundResult, error)
	Authorization(ctx context.Context, authID string) (*network.Authorization, error)
	AuthAttempts(ctx context.Context, cardNo string, limit int) ([]network.AuthAttempt, error)
}

// Rails takes the rail partners' reports of the internal API
// (*remittance.Service): ENOTFOUND remittance, ESTATE remittance_state.
type Rails interface {
	ReportRemittance(ctx context.Context, messageID, txID, status, reason string) (*remittance.Remittance, error)
}

// The sandbox's reads (sandbox.go): a test merchant's card and remittance,
// to refuse another merchant's as unknown; and the Idempotency-Key of a
// sandbox request, held like every /shop POST's.

// CardReader reads a merchant's card (*cards.Service): ENOTFOUND for an
// unknown card or another merchant's alike.
type CardReader interface {
	Card(ctx context.Context, merchant int64, cardNo string) (*cards.Card, error)
}

// RemittanceReader reads a merchant's remittance (*remittance.Service):
// ENOTFOUND for an unknown one or another merchant's alike.
type RemittanceReader interface {
	Remittance(ctx context.Context, merchant int64, txID string) (*remittance.Remittance, error)
}

var (
	_ Network          = (*network.Service)(nil)
	_ Rails            = (*remittance.Service)(nil)
	_ CardReader       = (*cards.Service)(nil)
	_ RemittanceReader = (*remittance.Service)(nil)
	_ api.ReadKeys     = (*ledger.Ledger)(nil)
)
