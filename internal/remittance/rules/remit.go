package rules

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
)

// Remittance requests (spec 2.6) and their validation against the corridor
// tables of corridors.go. Every failure is an EINVALID *Error whose Field is
// the JSON path of the offending input: "payer_id", "beneficiary.name",
// "beneficiary.country", "beneficiary.bank_swift", "beneficiary.account_no",
// "beneficiary.<dynamic field>", "amount", "currency", "purpose".

// Limits on the strings of a remittance request.
const (
	// BeneficiaryNameMax is the longest beneficiary name in characters: the
	// Max140Text of ISO 20022 (pacs.008 Cdtr/Nm), which every rail carries.
	BeneficiaryNameMax = 140
	// beneficiaryExtraMax bounds the dynamic fields of one beneficiary; no
	// corridor has more than a handful.
	beneficiaryExtraMax = 16
	// beneficiaryValueBytesMax bounds any dynamic field value.
	beneficiaryValueBytesMax = 140
	// fieldNameBytesMax bounds the name of a dynamic field.
	fieldNameBytesMax = 32
	// purposeBytesMax bounds a purpose code (the longest is 15 bytes).
	purposeBytesMax = 24
)

// Beneficiary is the "beneficiary" object of a remittance: the fixed fields
// of the spec and, in Extra, the corridor's dynamic fields by JSON name
// (routing_number, sort_code, ifsc, …). Its JSON form is one flat object:
// {"name":…,"country":…,"bank_swift":…,"account_no":…,"ifsc":…}.
type Beneficiary struct {
	Name      string
	Country   string
	BankSwift string
	AccountNo string
	Extra     map[string]string
}

// RemittanceRequest is the body of POST /shop/remittance/create once the
// amount has been parsed (ParseAmount checks the currency's decimals).
type RemittanceRequest struct {
	PayerID     string
	Beneficiary Beneficiary
	Amount      int64 // minor units of Currency
	Currency    string
	Purpose     string
}

// fixedBeneficiaryFields are the JSON names of Beneficiary's own fields.
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

// ValidateRemittance checks a remittance request and returns its corridor
// (rail, fee schedule). The checks, in order, stop at the first failure:
//
//   - payer_id: 1 to 64 characters of [A-Za-z0-9_.:-];
//   - beneficiary.name: 1 to 140 characters, valid UTF-8, printable (no
//     control, format or invisible characters), at least one letter, no
//     surrounding spaces. SWIFT guidance: the FIN "x" character set is
//     A-Z a-z 0-9 / - ? : ( ) . , ' + and space; other characters (accents,
//     non-Latin scripts) are accepted here because ISO 20022 and the local
//     schemes carry them, and a rail limited to that set transliterates
//     (Müller → Muller). Screening runs on the name as given;
//   - beneficiary.country: ISO 3166-1 alpha-2; currency: LookupCurrency;
//   - the corridor's fields, in its order: bank_swift (BIC format, country
//     letters in the beneficiary's country or its IBAN family; required on
//     SWIFT only, see corridors.go), account_no (an IBAN of the country, with
//     registry length, structure and mod-97 checksum, for IBAN countries and
//     SEPA; the corridor's domestic format otherwise), then each dynamic field
//     with its Format and checksum (ABA). Dynamic fields not in the corridor
//     are refused, each named ("beneficiary.ifsc" on a US corridor);
//   - amount: above zero and at most AmountMinorMax (the caller has checked
//     the currency's decimals with ParseAmount);
//   - purpose: required where the corridor requires one, and one of the
//     corridor's codes whenever given.
//
// Call Normalize first to accept the usual formatting (spaces in an IBAN,
// lower-case codes).
func ValidateRemittance(r *RemittanceRequest) (*Corridor, error) {
	if r == nil {
		return nil, postings.Errorf(postings.EINVALID, "no remittance request")
	}
	if !postings.IsRefText(r.PayerID) {
		return nil, postings.FieldErrorf("payer_id", "must be 1 to %d characters of A-Z a-z 0-9 _ . : -", postings.RefBytesMax)
	}
	b := &r.Beneficiary
	if err := validateBeneficiaryName(b.Name); err != nil {
		return nil, postings.WithField(err, "beneficiary.name")
	}
	if !IsCountryCode(b.Country) {
		return nil, countryError("beneficiary.country", b.Country)
	}
	cur, err := postings.LookupCurrency(r.Currency)
	if err != nil {
		return nil, err
	}
	c, err := DynamicFields(b.Country, cur.Code)
	if err != nil {
		return nil, err
	}
	if err := validateBeneficiaryFields(c, b); err != nil {
		return nil, err
	}
	if r.Amount <= 0 {
		return nil, postings.FieldErrorf("amount", "must be greater than zero")
	}
	if r.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "exceeds the maximum of %s %s", postings.FormatMinor(postings.AmountMinorMax, cur), cur.Code)
	}
	if err := validatePurpose(c, r.Purpose); err != nil {
		return nil, err
	}
	return c, nil
}

// IsReturnReasonCode reports an ISO 20022 return reason code: four
// upper-case letters or digits (AC01, AC04, MS03, …). A reason is shown to
// the merchant; this keeps it a code, never free text.
func IsReturnReasonCode(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isUpper(s[i]) && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

func validateBeneficiaryName(s string) error {
	if s == "" {
		return postings.Errorf(postings.EINVALID, "is required")
	}
	if len(s) > BeneficiaryNameMax*utf8.UTFMax {
		return postings.Errorf(postings.EINVALID, "must be valid UTF-8 text of at most %d characters", BeneficiaryNameMax)
	}
	// The free-text rules of every text field first, then the stricter
	// ones of a name that is screened and carried by payment rails.
	if err := postings.CheckText("", s, BeneficiaryNameMax); err != nil {
		return &postings.Error{Code: postings.EINVALID, Message: postings.AsError(err).Message}
	}
	n, letter := 0, false
	for _, r := range s {
		n++
		if !unicode.IsPrint(r) {
			return postings.Errorf(postings.EINVALID, "must not contain control, format or invisible characters (found U+%04X)", r)
		}
		if unicode.IsLetter(r) {
			letter = true
		}
	}
	if n > BeneficiaryNameMax {
		return postings.Errorf(postings.EINVALID, "has %d characters, at most %d are allowed", n, BeneficiaryNameMax)
	}
	if !letter {
		return postings.Errorf(postings.EINVALID, "must contain at least one letter")
	}
	if strings.TrimSpace(s) != s {
		return postings.Errorf(postings.EINVALID, "must not start or end with a space")
	}
	return nil
}

// validateBeneficiaryFields checks the corridor's fields, fixed and dynamic,
// and refuses dynamic fields the corridor does not know.
func validateBeneficiaryFields(c *Corridor, b *Beneficiary) error {
	if len(b.Extra) > beneficiaryExtraMax {
		return postings.FieldErrorf("beneficiary", "has more than %d dynamic fields", beneficiaryExtraMax)
	}
	for _, k := range sortedKeys(b.Extra) {
		if fixedBeneficiaryFields[k] {
			return postings.FieldErrorf(beneficiaryPath(k), "is a fixed beneficiary field, not a dynamic one")
		}
		if !isFieldName(k) {
			return postings.FieldErrorf("beneficiary", "unknown field %q", truncate(k, fieldNameBytesMax))
		}
		if c.Field(k) == nil {
			return postings.FieldErrorf(beneficiaryPath(k), "is not a field of remittances to %s in %s (%s rail); GET /shop/remittance/dynamic-fields lists them", c.Country, c.Currency, c.Rail)
		}
	}
	value := func(name string) string {
		switch name {
		case "bank_swift":
			return b.BankSwift
		case "account_no":
			return b.AccountNo
		}
		return b.Extra[name]
	}
	// Whether account_no holds an IBAN decides the fields that depend on it.
	accountIBAN := ""
	if f := c.Field("account_no"); f != nil {
		v := b.AccountNo
		if f.kind == kindIBAN || (f.kind == kindIBANOrLocal && len(v) >= 2 && isUpper(v[0]) && isUpper(v[1])) {
			accountIBAN = v
		}
	}
	for i := range c.Fields {
		f := &c.Fields[i]
		path := beneficiaryPath(f.Name)
		v := value(f.Name)
		if v == "" {
			switch {
			case f.Required:
				return postings.FieldErrorf(path, "is required for remittances to %s in %s: %s", c.Country, c.Currency, f.Description)
			case f.requiredUnlessIBAN && accountIBAN == "":
				return postings.FieldErrorf(path, "is required when account_no is not an IBAN: %s", f.Description)
			}
			continue
		}
		if len(v) > beneficiaryValueBytesMax {
			return postings.FieldErrorf(path, "is longer than %d characters", beneficiaryValueBytesMax)
		}
		if err := checkFieldValue(c, f, v); err != nil {
			return postings.WithField(err, path)
		}
		if f.ibanSlice[1] > 0 && accountIBAN != "" && len(accountIBAN) >= f.ibanSlice[1] &&
			v != accountIBAN[f.ibanSlice[0]:f.ibanSlice[1]] {
			return postings.FieldErrorf(path, "%q disagrees with the IBAN in account_no, which holds %q", v, accountIBAN[f.ibanSlice[0]:f.ibanSlice[1]])
		}
	}
	return nil
}

// checkFieldValue applies a field's format and checksum to a non-empty value.
// Its errors carry no field; the caller adds it.
func checkFieldValue(c *Corridor, f *Field, v string) error {
	switch f.kind {
	case kindBIC:
		if err := ValidateBIC(v); err != nil {
			return err
		}
		if !sameIBANFamily(v[4:6], c.Country) {
			return postings.Errorf(postings.EINVALID, "BIC %s is of a bank in %s, but beneficiary.country is %s", v, v[4:6], c.Country)
		}
	case kindIBAN, kindIBANOrLocal:
		if f.kind == kindIBANOrLocal && !(len(v) >= 2 && isUpper(v[0]) && isUpper(v[1])) {
			break // a domestic account number: Format below
		}
		if err := ValidateIBAN(v); err != nil {
			return err
		}
		if want, _ := ibanPrefixFor(c.Country); v[:2] != want {
			return postings.Errorf(postings.EINVALID, "is an IBAN of %s, but an account in %s has a %s IBAN", v[:2], c.Country, want)
		}
	case kindABA:
		if err := ValidateABARouting(v); err != nil {
			return err
		}
	}
	if !f.re.MatchString(v) {
		if len(f.AllowedValues) > 0 {
			return postings.Errorf(postings.EINVALID, "must be one of %s", strings.Join(f.AllowedValues, ", "))
		}
		return postings.Errorf(postings.EINVALID, "does not match %s: %s", f.Format, f.Description)
	}
	return nil
}

func validatePurpose(c *Corridor, p string) error {
	if p == "" {
		if c.PurposeRequired {
			return postings.FieldErrorf("purpose", "is required for remittances to %s in %s; the codes are listed by GET /shop/remittance/dynamic-fields", c.Country, c.Currency)
		}
		return nil
	}
	if len(p) > purposeBytesMax || !c.HasPurpose(p) {
		return postings.FieldErrorf("purpose", "%q is not a purpose code of remittances to %s in %s", truncate(p, purposeBytesMax), c.Country, c.Currency)
	}
	return nil
}

// RemittanceFee returns the fee of a remittance of amount minor units of
// currency on corridor c: c.FeeFixed + FeeBps(amount, c.FeeBasisPoints,
// RoundUp). The fee is paid, so its percentage rounds up (the house rule of
// rounding.go). currency must be the corridor's.
func RemittanceFee(c *Corridor, amount int64, currency postings.Currency) (int64, error) {
	if c == nil {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee without a corridor")
	}
	if currency.Code != c.Currency {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee in %s for a %s corridor", currency.Code, c.Currency)
	}
	if amount <= 0 || amount > postings.AmountMinorMax {
		return 0, postings.FieldErrorf("amount", "must lie between 1 and %d minor units", postings.AmountMinorMax)
	}
	if c.FeeFixed < 0 || c.FeeFixed > postings.AmountMinorMax || c.FeeBasisPoints < 0 || c.FeeBasisPoints > postings.BasisPointsMax {
		return 0, postings.Errorf(postings.EINTERNAL, "corridor %s/%s has an invalid fee schedule", c.Country, c.Currency)
	}
	variable, err := postings.FeeBps(amount, c.FeeBasisPoints, postings.RoundUp)
	if err != nil {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee arithmetic failed")
	}
	// Both terms are at most AmountMinorMax (10¹⁸): their sum cannot
	// overflow an int64.
	fee := c.FeeFixed + variable
	if fee > postings.AmountMinorMax {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee out of range")
	}
	return fee, nil
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
