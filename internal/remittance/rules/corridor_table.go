package rules

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/paygate/gateway/postings"
)

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
