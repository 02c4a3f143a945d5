package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"
)

// Corridor is what a remittance of Currency to Country needs (GET
// /shop/remittance/dynamic-fields).
type Corridor struct {
	Country         string          `json:"country"`
	Currency        string          `json:"currency"`
	Rail            string          `json:"rail"` // SEPA, LOCAL, SWIFT
	Fields          []CorridorField `json:"fields"`
	PurposeCodes    []PurposeCode   `json:"purposeCodes"`
	PurposeRequired bool            `json:"purposeRequired"`
	FeeFixed        Decimal         `json:"feeFixed"`
	FeeBasisPoints  int             `json:"feeBasisPoints"`
}

// CorridorField is one beneficiary field of a corridor.
type CorridorField struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Format        string   `json:"format"`
	Description   string   `json:"description"`
	AllowedValues []string `json:"allowedValues"`
	Required      bool     `json:"required"`
}

// PurposeCode is a value for CreateRemittanceRequest.Purpose.
type PurposeCode struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// CreateRemittanceRequest is the body of POST /shop/remittance/create
// (spec 2.6).
type CreateRemittanceRequest struct {
	PayerID     string      `json:"payer_id"`
	Beneficiary Beneficiary `json:"beneficiary"`
	Amount      Decimal     `json:"amount"`
	Currency    string      `json:"currency"`
	Purpose     string      `json:"purpose,omitempty"`
	CallbackURL string      `json:"callback_url,omitempty"`
}

// Beneficiary is who receives a remittance: Name and Country always, the
// rest as the corridor's Fields list them; Extra holds the corridor's
// other fields (sort_code, routing_number, ifsc, …) by their snake_case
// name. On the wire it is one flat object.
type Beneficiary struct {
	Name      string `json:"name"`
	Country   string `json:"country"`
	BankSwift string `json:"bank_swift,omitempty"`
	AccountNo string `json:"account_no,omitempty"`
	// Extra: the corridor's dynamic fields, flattened into the object.
	Extra map[string]string `json:"-"`
}

var errBeneficiaryExtra = errors.New("client: Beneficiary.Extra repeats a named field")

// MarshalJSON flattens Extra into the object.
func (b Beneficiary) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, 4+len(b.Extra))
	for k, v := range b.Extra {
		m[k] = v
	}
	for k, v := range map[string]string{"name": b.Name, "country": b.Country, "bank_swift": b.BankSwift, "account_no": b.AccountNo} {
		if _, dup := b.Extra[k]; dup {
			return nil, errBeneficiaryExtra
		}
		if v != "" || k == "name" || k == "country" {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the flat object back into the named fields and Extra.
func (b *Beneficiary) UnmarshalJSON(raw []byte) error {
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	*b = Beneficiary{Name: m["name"], Country: m["country"], BankSwift: m["bank_swift"], AccountNo: m["account_no"]}
	for k, v := range m {
		switch k {
		case "name", "country", "bank_swift", "account_no":
		default:
			if b.Extra == nil {
				b.Extra = map[string]string{}
			}
			b.Extra[k] = v
		}
	}
	return nil
}

// RemittanceCreated is the answer of a creation (SUBMITTED).
type RemittanceCreated struct {
	TxID      string    `json:"txId"`
	Status    string    `json:"status"`
	Amount    Decimal   `json:"amount"`
	Currency  string    `json:"currency"`
	Fee       Decimal   `json:"fee"`
	Rail      string    `json:"rail"`
	Purpose   string    `json:"purpose"`
	CreatedAt time.Time `json:"createdAt"`
}

// Remittance is GET /shop/remittance/query: the remittance and its steps.
type Remittance struct {
	TxID        string            `json:"txId"`
	Status      string            `json:"status"` // SUBMITTED, SCREENING, IN_FLIGHT, SETTLED, RETURNED, REJECTED
	Amount      Decimal           `json:"amount"`
	Currency    string            `json:"currency"`
	SettledAt   *time.Time        `json:"settledAt,omitempty"`
	Fee         Decimal           `json:"fee"`
	Rail        string            `json:"rail"`
	Purpose     string            `json:"purpose"`
	PayerID     string            `json:"payerId"`
	Beneficiary MaskedBeneficiary `json:"beneficiary"`
	Reason      string            `json:"reason,omitempty"`
	CreatedAt   time.Time         `json:"createdAt"`
	History     []RemittanceStep  `json:"history"`
}

// MaskedBeneficiary is the beneficiary as the query shows it: the account
// number masked to its last four characters.
type MaskedBeneficiary struct {
	Name      string `json:"name"`
	Country   string `json:"country"`
	AccountNo string `json:"account_no"`
}

// RemittanceStep is one step of a remittance's history.
type RemittanceStep struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason,omitempty"`
}

// RemittanceFields is GET /shop/remittance/dynamic-fields: the corridor of
// a destination country and currency.
func (c *Client) RemittanceFields(ctx context.Context, country, currency string, opts ...CallOption) (*Corridor, error) {
	var out Corridor
	q := url.Values{"country": {country}, "currency": {currency}}
	if err := c.call(ctx, opRemittanceFields, q, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateRemittance is POST /shop/remittance/create.
func (c *Client) CreateRemittance(ctx context.Context, req CreateRemittanceRequest, opts ...CallOption) (*RemittanceCreated, error) {
	var out RemittanceCreated
	if err := c.call(ctx, opCreateRemittance, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Remittance is GET /shop/remittance/query.
func (c *Client) Remittance(ctx context.Context, txID string, opts ...CallOption) (*Remittance, error) {
	var out Remittance
	if err := c.call(ctx, opGetRemittance, url.Values{"txId": {txID}}, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}
