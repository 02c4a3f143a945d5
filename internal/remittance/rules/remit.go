package rules

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
