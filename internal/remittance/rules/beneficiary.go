package rules

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/paygate/gateway/postings"
)

var fixedBeneficiaryFields = map[string]bool{"name": true, "country": true, "bank_swift": true, "account_no": true}

// UnmarshalJSON reads the flat beneficiary object: the four fixed fields and
// every other member into Extra. Every member must be a JSON string (or
// null, meaning absent); a member that is not names itself in the error.
func (b *Beneficiary) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return postings.FieldErrorf("beneficiary", "must be a JSON object of strings")
	}
	if len(raw) > len(fixedBeneficiaryFields)+beneficiaryExtraMax {
		return postings.FieldErrorf("beneficiary", "has more than %d fields", len(fixedBeneficiaryFields)+beneficiaryExtraMax)
	}
	out := Beneficiary{}
	for _, k := range sortedKeys(raw) {
		var v *string
		if err := json.Unmarshal(raw[k], &v); err != nil {
			return postings.FieldErrorf(beneficiaryPath(k), "must be a string")
		}
		if v == nil {
			continue
		}
		switch k {
		case "name":
			out.Name = *v
		case "country":
			out.Country = *v
		case "bank_swift":
			out.BankSwift = *v
		case "account_no":
			out.AccountNo = *v
		default:
			if out.Extra == nil {
				out.Extra = map[string]string{}
			}
			out.Extra[k] = *v
		}
	}
	*b = out
	return nil
}

// MarshalJSON writes the flat beneficiary object, members in name order.
func (b Beneficiary) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(b.Extra)+4)
	for k, v := range b.Extra {
		if !fixedBeneficiaryFields[k] {
			m[k] = v
		}
	}
	m["name"], m["country"] = b.Name, b.Country
	if b.BankSwift != "" {
		m["bank_swift"] = b.BankSwift
	}
	if b.AccountNo != "" {
		m["account_no"] = b.AccountNo
	}
	return json.Marshal(m)
}

// Normalize canonicalises a request in place before ValidateRemittance, the
// way a payment form would: it trims surrounding white space everywhere,
// upper-cases the country, currency, purpose and BIC, and applies the
// corridor's rule to each account field (spaces removed from account
// numbers, IBANs upper-cased — the printed "DE89 3704 …" form becomes the
// electronic one —, hyphens removed from a sort code, enumerations
// upper-cased). It never turns a wrong value into another valid one: it only
// removes formatting. The Extra map is replaced, not modified.
func (r *RemittanceRequest) Normalize() {
	b := &r.Beneficiary
	r.PayerID = strings.TrimSpace(r.PayerID)
	r.Currency = strings.ToUpper(strings.TrimSpace(r.Currency))
	r.Purpose = strings.ToUpper(strings.TrimSpace(r.Purpose))
	b.Name = strings.TrimSpace(b.Name)
	b.Country = strings.ToUpper(strings.TrimSpace(b.Country))
	c, err := DynamicFields(b.Country, r.Currency)
	if err != nil {
		c = nil
	}
	norm := func(name, v string) string {
		v = strings.TrimSpace(v)
		if c == nil {
			return v
		}
		if f := c.Field(name); f != nil && f.normalize != nil && len(v) <= beneficiaryValueBytesMax {
			return f.normalize(v)
		}
		return v
	}
	b.BankSwift = upperNoSpaces(strings.TrimSpace(b.BankSwift))
	b.AccountNo = norm("account_no", b.AccountNo)
	if b.Extra != nil {
		extra := make(map[string]string, len(b.Extra))
		for k, v := range b.Extra {
			extra[k] = norm(k, v)
		}
		b.Extra = extra
	}
}

// beneficiaryPath is the JSON path of a beneficiary member, for errors. A
// name that is not a plain field name is not echoed.
func beneficiaryPath(name string) string {
	if !isFieldName(name) {
		return "beneficiary"
	}
	return "beneficiary." + name
}

// isFieldName reports whether s is a snake_case field name: a lower-case
// letter, then lower-case letters, digits and underscores, 1 to 32 bytes.
func isFieldName(s string) bool {
	if s == "" || len(s) > fieldNameBytesMax || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return allBytes(s, func(c byte) bool { return (c >= 'a' && c <= 'z') || isDigit(c) || c == '_' })
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
