package partner

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// A rail partner's report on the internal API (docs/remittances.md, Rails):
// an in-flight remittance SETTLED or RETURNED, idempotent on the partner's
// message id.

// checkReturnReason checks an ISO 20022 return reason code: four upper-case
// letters or digits (AC01, AC04, MS03, …).
func checkReturnReason(s string) error {
	if !rules.IsReturnReasonCode(s) {
		return postings.FieldErrorf("reason", "must be an ISO 20022 return reason code such as AC01")
	}
	return nil
}

// railReport is a decoded POST /rail/report.
type railReport struct {
	MessageID, TxID, Status, Reason string
}

func decodeRailReport(c *gin.Context) (railReport, error) {
	raw, err := api.ReadBody(c)
	if err != nil {
		return railReport{}, err
	}
	var r railReport
	err = api.DecodeObject(raw, []api.Field{
		api.NewField("messageId", true, &r.MessageID),
		api.NewField("txId", true, &r.TxID),
		api.NewField("status", true, &r.Status),
		api.NewField("reason", false, &r.Reason),
	})
	if err != nil {
		return railReport{}, err
	}
	if err := checkMessageID(r.MessageID); err != nil {
		return railReport{}, err
	}
	return r, r.check()
}

// check checks what a report says: the remittance, the status and the
// reason, which only a return carries (the sandbox's settle and return
// check the same).
func (r railReport) check() error {
	if !postings.IsRefText(r.TxID) {
		return postings.FieldErrorf("txId", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'")
	}
	switch r.Status {
	case remittance.RemitSettled:
		if r.Reason != "" {
			return postings.FieldErrorf("reason", "only a RETURNED report carries a reason")
		}
	case remittance.RemitReturned:
		if r.Reason == "" {
			return postings.FieldErrorf("reason", "is required for RETURNED: an ISO 20022 return reason code such as AC01")
		}
		if err := checkReturnReason(r.Reason); err != nil {
			return err
		}
	default:
		return postings.FieldErrorf("status", "must be SETTLED or RETURNED")
	}
	return nil
}

// railReportView is the remittance after the report.
type railReportView struct {
	TxID      string         `json:"txId"`
	Status    string         `json:"status"`
	Reason    *string        `json:"reason"`
	Amount    postings.Money `json:"amount"`
	Fee       postings.Money `json:"fee"`
	Currency  string         `json:"currency"`
	Rail      string         `json:"rail"`
	SettledAt *string        `json:"settledAt"`
	UpdatedAt string         `json:"updatedAt"`
}

// handleRailReport answers POST /rail/report.
func handleRailReport(l Rails) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, err := decodeRailReport(c)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		r, err := l.ReportRemittance(c.Request.Context(), req.MessageID, req.TxID, req.Status, req.Reason)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, newRailReportView(r))
	}
}

func newRailReportView(r *remittance.Remittance) railReportView {
	return railReportView{
		TxID: r.TxID, Status: r.Status, Reason: stringOrNil(r.Reason),
		Amount: api.Money(r.Amount, r.Currency), Fee: api.Money(r.Fee, r.Currency), Currency: r.Currency,
		Rail: r.Rail, SettledAt: api.TimestampOrNil(r.SettledAt), UpdatedAt: api.Timestamp(r.UpdatedAt),
	}
}
