package rules

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
)

// ValidateRemittance checks a remittance request and returns its corridor
// (rail, fee schedule). The checks, in order, stop at the first failure:
//
//   - payer_id: 1 to 64 characters of [A-Za-z0-9_.:-];
//   - beneficiary.name: 1 to 140 characters, valid UTF-8, printable (no
//     control, format or invisible characters: no default-ignorable code
//     point, name_text.go, not even the Hangul fillers that are letters),
//     at least one letter, no
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
	if r, found := invisibleInText(s); found {
		return postings.Errorf(postings.EINVALID, "%s", invisibleMessage(r))
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
