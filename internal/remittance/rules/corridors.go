package rules

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

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

// Field constructors. Every Format is anchored; MustCompile makes a typo in
// the table fail at start-up (and in every test run), never at request time.

func newField(name, format, description string, required bool) Field {
	return Field{Name: name, Type: "string", Format: format, Description: description,
		Required: required, re: regexp.MustCompile(format), AllowedValues: []string{}}
}

func bicField(required bool) Field {
	desc := "BIC (SWIFT code) of the beneficiary's bank, 8 or 11 characters; its country letters (positions 5-6) must be the beneficiary's country"
	if !required {
		desc += "; optional on this rail, checked when given"
	}
	f := newField("bank_swift", bicPattern, desc, required)
	f.kind = kindBIC
	f.normalize = upperNoSpaces
	return f
}

// ibanField is account_no holding an IBAN of the country whose IBANs start
// with prefix.
func ibanField(country, prefix string) Field {
	desc := "IBAN of the beneficiary's account in " + country + ", " +
		strconv.Itoa(ibanRegistry[prefix].length) + " characters, upper case without spaces; the mod-97 checksum is verified"
	if prefix != country {
		desc += " (accounts in " + country + " have " + prefix + " IBANs)"
	}
	f := newField("account_no", ibanFormatRegexp(prefix), desc, true)
	f.kind = kindIBAN
	f.normalize = upperNoSpaces
	return f
}

// accountField is account_no holding a domestic account number.
func accountField(format, description string) Field {
	f := newField("account_no", format, description, true)
	f.normalize = noSpaces
	return f
}

func enumField(name, description string, required bool, values ...string) Field {
	f := newField(name, "^("+strings.Join(values, "|")+")$", description, required)
	f.AllowedValues = values
	f.normalize = strings.ToUpper
	return f
}

// sepaCountries are the SEPA countries and territories whose EUR payments go
// over SEPA Credit Transfer (EPC list of SEPA countries): the EEA, the
// non-EEA scheme members CH, GB, MC, SM, VA, AD, and the territories AX, GF,
// GP, MQ, RE, YT, BL, MF, PM, GI, GG, JE, IM. GB in EUR is SEPA because UK
// banks stayed SCT participants. The 2024-2025 accession candidates (AL, MD,
// ME, MK, RS) are left on SWIFT until their banks reach SCT.
var sepaCountries = []string{
	"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR",
	"HR", "HU", "IE", "IS", "IT", "LI", "LT", "LU", "LV", "MT", "NL", "NO",
	"PL", "PT", "RO", "SE", "SI", "SK",
	"CH", "GB", "MC", "SM", "VA", "AD",
	"AX", "GF", "GP", "MQ", "RE", "YT", "BL", "MF", "PM", "GI", "GG", "JE", "IM",
}

// corridorTable is the one table of named corridors, keyed by (destination
// country, currency). Pairs absent from it take swiftCorridor.
var corridorTable = buildCorridorTable()

func buildCorridorTable() map[corridorKey]*Corridor {
	t := map[corridorKey]*Corridor{}
	add := func(c *Corridor) {
		k := corridorKey{c.Country, c.Currency}
		if _, dup := t[k]; dup {
			panic("postings: duplicate corridor " + c.Country + "/" + c.Currency)
		}
		t[k] = c
	}
	for _, cc := range sepaCountries {
		prefix, _ := ibanPrefixFor(cc)
		add(&Corridor{Country: cc, Currency: "EUR", Rail: RailSEPA,
			Fields:       []Field{bicField(false), ibanField(cc, prefix)},
			PurposeCodes: isoPurposes, FeeFixed: 50, FeeBasisPoints: 5})
	}

	sortCode := newField("sort_code", "^[0-9]{6}$",
		"UK sort code of the beneficiary's branch, 6 digits without hyphens; required when account_no is an 8-digit account number, and when given with a GB IBAN it must equal the IBAN's sort code (characters 9-14)", false)
	sortCode.requiredUnlessIBAN = true
	sortCode.ibanSlice = [2]int{8, 14}
	sortCode.normalize = func(s string) string { return strings.NewReplacer("-", "", " ", "").Replace(s) }
	gbAccount := newField("account_no", "^([0-9]{8}|"+strings.Trim(ibanFormatRegexp("GB"), "^$")+")$",
		"either the 8-digit UK account number (with sort_code) or the GB IBAN of the account (22 characters, mod-97 checked)", true)
	gbAccount.kind = kindIBANOrLocal
	gbAccount.normalize = upperNoSpaces
	add(&Corridor{Country: "GB", Currency: "GBP", Rail: RailLocal,
		Fields:       []Field{bicField(false), gbAccount, sortCode},
		PurposeCodes: isoPurposes, FeeFixed: 50, FeeBasisPoints: 10})

	routing := newField("routing_number", abaPattern,
		"ABA routing transit number of the beneficiary's bank, 9 digits; the 3-7-1 checksum is verified", true)
	routing.kind = kindABA
	routing.normalize = noSpaces
	add(&Corridor{Country: "US", Currency: "USD", Rail: RailLocal,
		Fields: []Field{bicField(false),
			accountField("^[0-9]{4,17}$", "US bank account number (ACH DFI account), 4 to 17 digits"),
			routing,
			enumField("account_type", "type of the US account", true, "CHECKING", "SAVINGS")},
		PurposeCodes: isoPurposes, FeeFixed: 100, FeeBasisPoints: 10})

	ifsc := newField("ifsc", "^[A-Z]{4}0[A-Z0-9]{6}$",
		"Indian Financial System Code of the beneficiary's branch: 4 letters (bank), 0, 6 letters or digits (branch), e.g. HDFC0001234", true)
	ifsc.normalize = upperNoSpaces
	add(&Corridor{Country: "IN", Currency: "INR", Rail: RailLocal,
		Fields: []Field{bicField(false),
			accountField("^[0-9]{9,18}$", "Indian bank account number, 9 to 18 digits"),
			ifsc},
		PurposeCodes: rbiPurposes, PurposeRequired: true, FeeFixed: 5000, FeeBasisPoints: 30})

	cnaps := newField("cnaps_code", "^[0-9]{12}$",
		"CNAPS code (China National Advanced Payment System bank code) of the beneficiary's branch, 12 digits", true)
	cnaps.normalize = noSpaces
	add(&Corridor{Country: "CN", Currency: "CNY", Rail: RailLocal,
		Fields: []Field{bicField(false),
			accountField("^[0-9]{8,30}$", "Chinese bank account or card number, 8 to 30 digits"),
			cnaps},
		PurposeCodes: cnPurposes, PurposeRequired: true, FeeFixed: 1500, FeeBasisPoints: 40})

	hkBank := newField("bank_code", "^[0-9]{3}$",
		"HKICL bank code of the beneficiary's bank, 3 digits (e.g. 004 HSBC)", true)
	hkBank.normalize = noSpaces
	add(&Corridor{Country: "HK", Currency: "HKD", Rail: RailLocal,
		Fields: []Field{bicField(false),
			accountField("^[0-9]{6,14}$", "Hong Kong account number including the branch code, 6 to 14 digits, without the bank code"),
			hkBank},
		PurposeCodes: isoPurposes, FeeFixed: 500, FeeBasisPoints: 20})

	sgBank := newField("bank_code", "^[0-9]{4}$",
		"Singapore bank code of the beneficiary's bank, 4 digits (e.g. 7171 DBS)", true)
	sgBank.normalize = noSpaces
	add(&Corridor{Country: "SG", Currency: "SGD", Rail: RailLocal,
		Fields: []Field{bicField(false),
			accountField("^[0-9]{6,17}$", "Singapore bank account number, 6 to 17 digits"),
			sgBank},
		PurposeCodes: isoPurposes, FeeFixed: 100, FeeBasisPoints: 20})

	add(&Corridor{Country: "AE", Currency: "AED", Rail: RailLocal,
		Fields:       []Field{bicField(false), ibanField("AE", "AE")},
		PurposeCodes: uaePurposes, PurposeRequired: true, FeeFixed: 500, FeeBasisPoints: 20})
	return t
}

// swiftPurposeRules names the destinations whose regulator wants a purpose
// code on every incoming payment, whatever the currency: the UAE (CBUAE
// codes) and India (RBI P-codes for the inward remittance certificate), and
// Bahrain and Kuwait (ISO codes) after Currencycloud's purpose-code guide.
var swiftPurposeRules = map[string]struct {
	codes    []PurposeCode
	required bool
}{
	"AE": {uaePurposes, true},
	"IN": {rbiPurposes, true},
	"BH": {isoPurposes, true},
	"KW": {isoPurposes, true},
}

const swiftBasisPoints = 25

// swiftCorridor builds the SWIFT corridor of a pair without a named one: a
// required BIC, and account_no as an IBAN in an IBAN country, 1 to 34 letters
// or digits elsewhere.
func swiftCorridor(country, currency string) (*Corridor, error) {
	fixed, ok := swiftFixedFees[currency]
	if !ok {
		// A currency added to currency.go without a SWIFT fee: refuse rather
		// than send it for free (TestSwiftFeesCoverCurrencies guards this).
		return nil, postings.FieldErrorf("currency", "remittances in %s are not offered", currency)
	}
	account := swiftAccount
	if f, ok := swiftIBANAccounts[country]; ok {
		account = f
	}
	c := &Corridor{Country: country, Currency: currency, Rail: RailSWIFT,
		Fields:       []Field{swiftBIC, account},
		PurposeCodes: append([]PurposeCode{}, isoPurposes...),
		FeeFixed:     fixed, FeeBasisPoints: swiftBasisPoints}
	if r, ok := swiftPurposeRules[country]; ok {
		c.PurposeCodes = append([]PurposeCode{}, r.codes...)
		c.PurposeRequired = r.required
	}
	return c, nil
}

// The fields of SWIFT corridors, compiled once: a required BIC, and
// account_no as the IBAN of each IBAN country or a free account number.
var (
	swiftBIC          = bicField(true)
	swiftAccount      = accountField("^[A-Za-z0-9]{1,34}$", "account number of the beneficiary at its bank, 1 to 34 letters or digits")
	swiftIBANAccounts = func() map[string]Field {
		m := map[string]Field{}
		for cc := range countryCodes {
			if prefix, ok := ibanPrefixFor(cc); ok {
				m[cc] = ibanField(cc, prefix)
			}
		}
		return m
	}()
)

// swiftFixedFees is the fixed part of the SWIFT fee per currency, in minor
// units: about 15 USD, rounded to a plain amount of the currency.
var swiftFixedFees = map[string]int64{
	"AED": 5500, "ARS": 1500000, "AUD": 2300, "BDT": 180000, "BGN": 2700,
	"BHD": 5700, "BRL": 8500, "CAD": 2000, "CHF": 1300, "CLP": 14000,
	"CNY": 10000, "COP": 6000000, "CZK": 35000, "DKK": 10000, "EGP": 75000,
	"EUR": 1500, "GBP": 1200, "HKD": 12000, "HUF": 550000, "IDR": 25000000,
	"ILS": 5500, "INR": 130000, "IQD": 20000000, "ISK": 2000, "JOD": 10700,
	"JPY": 2300, "KES": 200000, "KRW": 21000, "KWD": 4600, "LKR": 450000,
	"LYD": 80000, "MAD": 14000, "MXN": 28000, "MYR": 6500, "NGN": 2300000,
	"NOK": 16000, "NZD": 2500, "OMR": 5800, "PEN": 5500, "PHP": 85000,
	"PKR": 420000, "PLN": 6000, "QAR": 5500, "RON": 7000, "SAR": 5600,
	"SEK": 15000, "SGD": 2000, "THB": 50000, "TND": 45000, "TRY": 60000,
	"TWD": 48000, "UGX": 55000, "USD": 1500, "VND": 380000, "XAF": 8500,
	"XOF": 8500, "ZAR": 27000,
}

// isoPurposes are ISO 20022 ExternalPurpose1Code values, the purpose codes
// of SEPA and SWIFT (pacs.008 Purp/Cd). SCVE is ISO's code for services
// (there is no "SERV").
var isoPurposes = []PurposeCode{
	{"GDDS", "Purchase or sale of goods"},
	{"SCVE", "Purchase or sale of services"},
	{"SUPP", "Supplier payment"},
	{"TRAD", "Trade services"},
	{"ADVA", "Advance payment"},
	{"INTC", "Intra-company payment"},
	{"SALA", "Salary payment"},
	{"LICF", "Licence fee"},
	{"ROYA", "Royalties"},
	{"RENT", "Rent"},
	{"TAXS", "Tax payment"},
	{"OTHR", "Other"},
}

// rbiPurposes is a subset of the Reserve Bank of India purpose codes for
// inward remittances (P-codes, FETERS / RBI Master Direction on reporting),
// the ones a merchant paying an Indian supplier or employee would use. The
// bank receiving the payment reports it to the RBI under this code.
var rbiPurposes = []PurposeCode{
	{"P0101", "Export bills negotiated, purchased or discounted (goods)"},
	{"P0102", "Realisation of export bills sent on collection (goods, full invoice value)"},
	{"P0103", "Advance receipt against an export contract (goods)"},
	{"P0104", "Receipt against export of goods not covered by shipping documents"},
	{"P0105", "Export bills sent on collection (goods)"},
	{"P0106", "Conversion of overdue export bills from NPD to collection mode"},
	{"P0107", "Realisation of NPD export bills (full value of the bill)"},
	{"P0108", "Goods sold under merchanting trade (export leg)"},
	{"P0301", "Purchases towards travel"},
	{"P0801", "Hardware consultancy"},
	{"P0802", "Software implementation or consultancy"},
	{"P0803", "Database and data processing charges"},
	{"P0807", "Off-site software exports"},
	{"P1002", "Trade-related services: commission on exports or imports"},
	{"P1004", "Legal services"},
	{"P1005", "Accounting, auditing, book-keeping and tax consulting services"},
	{"P1006", "Business and management consultancy and public relations services"},
	{"P1007", "Advertising, trade fair, market research and opinion polling services"},
	{"P1008", "Research and development services"},
	{"P1009", "Architectural, engineering and other technical services"},
	{"P1019", "Other services not included elsewhere"},
	{"P1401", "Compensation of employees"},
}

// cnPurposes are the transaction categories of the PBOC RMB Cross-border
// Payment and Receipt Management Information System (RCPMIS), under which a
// Chinese bank reports every cross-border CNY receipt. GOODS_TRADE and
// SERVICE_TRADE need an invoice or contract at the receiving bank;
// CAPITAL_ACCOUNT needs the beneficiary's SAFE registration.
var cnPurposes = []PurposeCode{
	{"GOODS_TRADE", "Trade in goods (货物贸易)"},
	{"SERVICE_TRADE", "Trade in services (服务贸易), e.g. logistics, software, consulting"},
	{"INCOME_TRANSFER", "Income and current transfers (收益和经常转移): employee compensation, investment income, donations"},
	{"CAPITAL_ACCOUNT", "Capital and financial account (资本项目): direct investment, loans"},
}

// uaePurposes is a subset of the Central Bank of the UAE purpose-of-payment
// codes (UAEFTS), three letters each, for business payments into the UAE.
// Goods are GDI (imports) and GDE (exports): there is no single goods code.
var uaePurposes = []PurposeCode{
	{"GDI", "Goods bought (imports)"},
	{"GDE", "Goods sold (exports)"},
	{"GMS", "Processing, repair and maintenance services on goods"},
	{"SCO", "Construction services"},
	{"STR", "Travel"},
	{"ITS", "Computer and information services"},
	{"TCS", "Telecommunication services"},
	{"INS", "Insurance services"},
	{"FIS", "Financial services"},
	{"IPC", "Charges for the use of intellectual property (royalties)"},
	{"TTS", "Technical, trade-related and other business services"},
	{"OTS", "Other business services not included elsewhere"},
	{"RNT", "Rent payments"},
	{"SAL", "Salary (compensation of employees)"},
	{"FAM", "Family support (workers' remittances)"},
	{"EDU", "Educational support"},
	{"DIV", "Dividend payouts"},
}

// iso3166Alpha2 is the full list of officially assigned ISO 3166-1 alpha-2
// codes (249), plus XK (Kosovo), a user-assigned code that SWIFT, the IBAN
// registry and the EU use. Reserved codes (UK, EU, EL …) are not countries.
const iso3166Alpha2 = `
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ
DE DJ DK DM DO DZ
EC EE EG EH ER ES ET
FI FJ FK FM FO FR
GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
HK HM HN HR HT HU
ID IE IL IM IN IO IQ IR IS IT
JE JM JO JP
KE KG KH KI KM KN KP KR KW KY KZ
LA LB LC LI LK LR LS LT LU LV LY
MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
NA NC NE NF NG NI NL NO NP NR NU NZ
OM
PA PE PF PG PH PK PL PM PN PR PS PT PW PY
QA
RE RO RS RU RW
SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
UA UG UM US UY UZ
VA VC VE VG VI VN VU
WF WS
XK
YE YT
ZA ZM ZW
`

var countryCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(iso3166Alpha2) {
		m[c] = true
	}
	return m
}()

// countryError refuses a country code, with a hint for the two usual
// mistakes (UK for GB, EL for GR: codes of the EU, not of ISO 3166).
func countryError(field, code string) error {
	hint := ""
	switch code {
	case "UK":
		hint = "; the United Kingdom is GB"
	case "EL":
		hint = "; Greece is GR"
	}
	return postings.FieldErrorf(field, "%q is not an ISO 3166-1 alpha-2 country code (two upper-case letters, e.g. DE)%s", truncate(code, 8), hint)
}

// IsCountryCode reports whether code is an ISO 3166-1 alpha-2 country code
// (upper case), XK included.
func IsCountryCode(code string) bool { return len(code) == 2 && countryCodes[code] }

func upperNoSpaces(s string) string { return strings.ToUpper(noSpaces(s)) }

func noSpaces(s string) string { return strings.ReplaceAll(s, " ", "") }
