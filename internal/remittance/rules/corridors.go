package rules

import (
	"regexp"
	"sort"

	"github.com/paygate/gateway/postings"
)

// Remittance corridors: for a destination country and a currency, the rail
// the payment travels on, the beneficiary fields it needs, its purpose codes
// and its fee. Everything is data: corridorTable below for the named
// corridors, and one SWIFT rule for every other (country, currency) pair.
// GET /shop/remittance/dynamic-fields answers DynamicFields; POST
// /shop/remittance/create checks a request against the same data with
// ValidateRemittance, so the schema shown and the rules applied cannot drift.
//
// Rails (the Rail values):
//
//	SEPA   SEPA Credit Transfer, EUR to an IBAN in a SEPA country or territory.
//	LOCAL  the domestic scheme of the destination: Faster Payments (GB),
//	       ACH (US), IMPS/NEFT (IN), CNAPS (CN), FPS/CHATS (HK), FAST (SG),
//	       UAEFTS (AE).
//	SWIFT  a cross-border credit transfer through correspondent banks; the
//	       default for every pair without a named corridor.
//
// Beneficiary fields: the request always carries beneficiary.name and
// beneficiary.country (not listed in Fields, always required). Fields lists
// everything else the corridor reads, with the fixed fields of the spec
// (bank_swift: the BIC; account_no: the account number or IBAN) first and
// the corridor's own fields after them. Every field is a JSON string inside
// the beneficiary object; Format is an anchored RE2 expression the value must
// match, and some fields carry a checksum on top (IBAN mod 97, ABA 3-7-1).
//
// When the BIC is required: on the SWIFT rail only, where it routes the
// payment. SEPA routes on the IBAN alone (EU Regulation 260/2012, art. 5(7):
// no BIC may be demanded for an IBAN payment inside SEPA), and each local
// scheme routes on its own bank identifier (sort code, ABA, IFSC, CNAPS, bank
// code, or the bank code inside the AE IBAN). Where it is optional a BIC may
// still be given, and it is then checked like a required one: format, and
// country letters (positions 5-6) equal to beneficiary.country or to a
// country of the same IBAN family (a Jersey beneficiary may bank with a GB
// BIC).
//
// Fee schedule (RemittanceFee): fee = fixed + ceil(amount × bps / 10 000),
// in minor units of the remittance currency, charged on top of the amount.
//
//	corridor                      rail   fixed            bps
//	SEPA countries, EUR           SEPA   0.50 EUR            5
//	GB, GBP                       LOCAL  0.50 GBP           10
//	US, USD                       LOCAL  1.00 USD           10
//	IN, INR                       LOCAL  50.00 INR          30
//	CN, CNY                       LOCAL  15.00 CNY          40
//	HK, HKD                       LOCAL  5.00 HKD           20
//	SG, SGD                       LOCAL  1.00 SGD           20
//	AE, AED                       LOCAL  5.00 AED           20
//	any other pair                SWIFT  swiftFixedFees     25
//	                                     (about 15 USD in
//	                                     the currency)
//
// Example: 1 000.00 EUR to DE costs 50 + ceil(100000 × 5 / 10000) = 50 + 50
// = 100 minor units, 1.00 EUR; 0.01 EUR costs 50 + ceil(0.005) = 51.

// Rail is the payment scheme a remittance travels on.
type Rail string

// The rails.
const (
	RailSEPA  Rail = "SEPA"
	RailLocal Rail = "LOCAL"
	RailSWIFT Rail = "SWIFT"
)

// Field describes one beneficiary field of a corridor, as the dynamic-fields
// endpoint shows it.
type Field struct {
	// Name is the snake_case JSON name of the field inside "beneficiary".
	Name string `json:"name"`
	// Type is the JSON type of the value; always "string".
	Type string `json:"type"`
	// Format is an anchored RE2 regular expression the value matches.
	Format string `json:"format"`
	// Description says what the field is, and any rule beyond Format.
	Description string `json:"description"`
	// AllowedValues enumerates the values when the field is an enumeration.
	AllowedValues []string `json:"allowedValues"`
	// Required says whether the field must be present. A field that is
	// required only in some cases is false here; Description says when.
	Required bool `json:"required"`

	kind fieldKind
	re   *regexp.Regexp
	// requiredUnlessIBAN: the field is required when account_no is a
	// domestic account number, not an IBAN (GB sort code).
	requiredUnlessIBAN bool
	// ibanSlice: when account_no is an IBAN and the field is given too, the
	// field must equal iban[ibanSlice[0]:ibanSlice[1]] (the GB sort code sits
	// at positions 9-14 of a GB IBAN).
	ibanSlice [2]int
	// normalize canonicalises the value in Normalize (nil: trim only).
	normalize func(string) string
}

// fieldKind selects the checks a field gets beyond its Format.
type fieldKind int

const (
	kindPlain       fieldKind = iota
	kindBIC                   // ValidateBIC + country letters
	kindIBAN                  // ValidateIBAN + country prefix
	kindIBANOrLocal           // an IBAN of the country, or a domestic number (Format)
	kindABA                   // ValidateABARouting
)

// PurposeCode is one purpose-of-payment code a corridor accepts.
type PurposeCode struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// Corridor is the answer of GET /shop/remittance/dynamic-fields and the
// outcome of ValidateRemittance: what a remittance of Currency to an account
// in Country needs, the rail it travels on and what it costs.
type Corridor struct {
	Country         string        `json:"country"`
	Currency        string        `json:"currency"`
	Rail            Rail          `json:"rail"`
	Fields          []Field       `json:"fields"`
	PurposeCodes    []PurposeCode `json:"purposeCodes"`
	PurposeRequired bool          `json:"purposeRequired"`

	// FeeFixed (minor units of Currency) and FeeBasisPoints are the fee
	// schedule of the corridor; RemittanceFee applies them. They are not
	// part of the dynamic-fields answer.
	FeeFixed       int64 `json:"-"`
	FeeBasisPoints int64 `json:"-"`
}

// Field returns the field called name, or nil.
func (c *Corridor) Field(name string) *Field {
	for i := range c.Fields {
		if c.Fields[i].Name == name {
			return &c.Fields[i]
		}
	}
	return nil
}

// HasPurpose reports whether code is one of the corridor's purpose codes.
func (c *Corridor) HasPurpose(code string) bool {
	for _, p := range c.PurposeCodes {
		if p.Code == code {
			return true
		}
	}
	return false
}

// clone returns a deep copy, so that no caller can alter the table.
func (c *Corridor) clone() *Corridor {
	out := *c
	out.Fields = make([]Field, len(c.Fields))
	for i, f := range c.Fields {
		f.AllowedValues = append([]string{}, f.AllowedValues...)
		out.Fields[i] = f
	}
	out.PurposeCodes = append([]PurposeCode{}, c.PurposeCodes...)
	return &out
}

// DynamicFields returns the corridor for a remittance of currency to an
// account in country: both upper case, country an ISO 3166-1 alpha-2 code
// (error on field "country"), currency a supported ISO 4217 code (error on
// field "currency", from LookupCurrency). Pairs without a named corridor get
// the SWIFT corridor. The result is the caller's own copy.
func DynamicFields(country, currency string) (*Corridor, error) {
	if !IsCountryCode(country) {
		return nil, countryError("country", country)
	}
	if _, err := postings.LookupCurrency(currency); err != nil {
		return nil, err
	}
	if c, ok := corridorTable[corridorKey{country, currency}]; ok {
		return c.clone(), nil
	}
	return swiftCorridor(country, currency)
}

type corridorKey struct{ country, currency string }

// NamedCorridors returns every corridor of the table (SEPA and the local
// rails), sorted by country then currency, each the caller's own copy.
// Every other pair takes the SWIFT corridor (DynamicFields). Tests walk it
// to cover every corridor, including ones added later.
func NamedCorridors() []*Corridor {
	out := make([]*Corridor, 0, len(corridorTable))
	for _, c := range corridorTable {
		out = append(out, c.clone())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Country != out[j].Country {
			return out[i].Country < out[j].Country
		}
		return out[i].Currency < out[j].Currency
	})
	return out
}
