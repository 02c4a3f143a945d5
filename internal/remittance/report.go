package remittance

import (
	"context"
	"database/sql"
	"errors"

	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// ReportRemittance records a rail partner's report that an in-flight
// remittance SETTLED or RETURNED. It is idempotent on the partner's message
// id (scope rail): a repeat answers the same and moves nothing.
func (s *Service) ReportRemittance(ctx context.Context, messageID, txID, status, reason string) (*Remittance, error) {
	if !postings.IsRefText(messageID) {
		return nil, postings.FieldErrorf("messageId", "must be 1 to 64 characters of [A-Za-z0-9_.:-]")
	}
	if status != RemitSettled && status != RemitReturned {
		return nil, postings.FieldErrorf("status", "must be SETTLED or RETURNED")
	}
	if status == RemitReturned && reason == "" {
		return nil, postings.FieldErrorf("reason", "a return needs its ISO reason code, e.g. AC01")
	}
	if reason != "" && !rules.IsReturnReasonCode(reason) {
		// The reason is shown to the merchant: a code, never free text.
		return nil, postings.FieldErrorf("reason", "must be an ISO 20022 return reason code such as AC01")
	}
	if status != RemitReturned {
		reason = "" // a settlement has no reason; the doors refuse one (POST /rail/report, rail settle)
	}
	var merchant int64
	err := s.l.DB().NewRaw(`select merchant_id from remittances where tx_id = ?`, txID).Scan(ctx, &merchant)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errRemitNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	r, _, err := s.TransitionRemittance(ctx, merchant, RemittanceTransition{TxID: txID, To: status, Reason: reason},
		&ledger.Idempotency{Scope: ledger.ScopeRail, Key: messageID})
	return r, err
}
