package views

import (
	"encoding/json"

	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// DynamicFields is the answer of GET /shop/remittance/dynamic-fields: the
// corridor and its fee schedule.
type DynamicFields struct {
	Country         string              `json:"country"`
	Currency        string              `json:"currency"`
	Rail            rules.Rail          `json:"rail"`
	Fields          []rules.Field       `json:"fields"`
	PurposeCodes    []rules.PurposeCode `json:"purposeCodes"`
	PurposeRequired bool                `json:"purposeRequired"`
	FeeFixed        postings.Money      `json:"feeFixed"`
	FeeBasisPoints  int64               `json:"feeBasisPoints"`
}

// NewDynamicFields is the answer for the corridor cor.
func NewDynamicFields(cor *rules.Corridor) DynamicFields {
	return DynamicFields{
		Country: cor.Country, Currency: cor.Currency, Rail: cor.Rail,
		Fields: cor.Fields, PurposeCodes: cor.PurposeCodes, PurposeRequired: cor.PurposeRequired,
		FeeFixed: Money(cor.FeeFixed, cor.Currency), FeeBasisPoints: cor.FeeBasisPoints,
	}
}

// RemittanceCreated is the answer of POST /shop/remittance/create.
type RemittanceCreated struct {
	TxID      string         `json:"txId"`
	Status    string         `json:"status"`
	Amount    postings.Money `json:"amount"`
	Currency  string         `json:"currency"`
	Fee       postings.Money `json:"fee"`
	Rail      string         `json:"rail"`
	Purpose   string         `json:"purpose"`
	CreatedAt string         `json:"createdAt"`
}

// NewRemittanceCreated is the answer of the creation of r.
func NewRemittanceCreated(r *remittance.Remittance) RemittanceCreated {
	return RemittanceCreated{TxID: r.TxID, Status: r.Status,
		Amount: Money(r.Amount, r.Currency), Currency: r.Currency, Fee: Money(r.Fee, r.Currency),
		Rail: r.Rail, Purpose: r.Purpose, CreatedAt: Timestamp(r.CreatedAt)}
}

// Beneficiary is the beneficiary as the query shows it: the account number
// masked down to its last four characters.
type Beneficiary struct {
	Name      string `json:"name"`
	Country   string `json:"country"`
	AccountNo string `json:"account_no"`
}

// maskAccount keeps the last four characters of an account number behind
// "****"; an account of four characters or fewer is not shown at all.
func maskAccount(s string) string {
	if len(s) <= 4 {
		return "****"
	}
	return "****" + s[len(s)-4:]
}

// RemittanceStep is one step of a remittance's history.
type RemittanceStep struct {
	Status string `json:"status"`
	At     string `json:"at"`
	Reason string `json:"reason,omitempty"`
}

// Remittance is the answer of GET /shop/remittance/query: the remittance of
// spec 2.5 and what the gateway adds to it.
type Remittance struct {
	TxID        string           `json:"txId"`
	Status      string           `json:"status"`
	Amount      postings.Money   `json:"amount"`
	Currency    string           `json:"currency"`
	SettledAt   *string          `json:"settledAt,omitempty"`
	Fee         postings.Money   `json:"fee"`
	Rail        string           `json:"rail"`
	Purpose     string           `json:"purpose"`
	PayerID     string           `json:"payerId"`
	Beneficiary Beneficiary      `json:"beneficiary"`
	Reason      string           `json:"reason,omitempty"`
	CreatedAt   string           `json:"createdAt"`
	History     []RemittanceStep `json:"history"`
}

// NewRemittance is r as the query answers it. An error is a stored
// beneficiary that does not decode: a row the gateway wrote, so a bug.
func NewRemittance(r *remittance.Remittance) (Remittance, error) {
	var b Beneficiary // the stored object's names are the view's
	if err := json.Unmarshal(r.Beneficiary, &b); err != nil {
		return Remittance{}, err // a stored row the gateway wrote: a bug, answered 500
	}
	b.AccountNo = maskAccount(b.AccountNo)
	v := Remittance{
		TxID: r.TxID, Status: r.Status, Amount: Money(r.Amount, r.Currency), Currency: r.Currency,
		Fee: Money(r.Fee, r.Currency), Rail: r.Rail, Purpose: r.Purpose, PayerID: r.PayerID,
		Beneficiary: b, CreatedAt: Timestamp(r.CreatedAt),
		History: make([]RemittanceStep, 0, len(r.History)),
	}
	if r.Status == remittance.RemitSettled {
		v.SettledAt = TimestampOrNil(r.SettledAt)
	}
	if r.Status == remittance.RemitReturned || r.Status == remittance.RemitRejected {
		v.Reason = r.Reason
	}
	for _, h := range r.History {
		v.History = append(v.History, RemittanceStep{Status: h.Status, At: Timestamp(h.At), Reason: h.Reason})
	}
	return v, nil
}
