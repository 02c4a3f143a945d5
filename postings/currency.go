package postings

import "sort"

// Currency is an ISO 4217 currency with its minor-unit exponent: an amount of
// 12.34 USD is stored as 1234 minor units because USD has exponent 2.
type Currency struct {
	Code     string
	Exponent int32
}

// currencies lists the ISO 4217 codes the gateway knows, with the exponents of
// the ISO 4217 table (amendment 176). Codes without a minor unit (XAU, XDR,
// …) are left out on purpose: nothing here can hold them.
var currencies = map[string]int32{
	"AED": 2, "ARS": 2, "AUD": 2, "BDT": 2, "BGN": 2, "BHD": 3, "BRL": 2,
	"CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2, "COP": 2, "CZK": 2, "DKK": 2,
	"EGP": 2, "EUR": 2, "GBP": 2, "HKD": 2, "HUF": 2, "IDR": 2, "ILS": 2,
	"INR": 2, "IQD": 3, "ISK": 0, "JOD": 3, "JPY": 0, "KES": 2, "KRW": 0,
	"KWD": 3, "LKR": 2, "LYD": 3, "MAD": 2, "MXN": 2, "MYR": 2, "NGN": 2,
	"NOK": 2, "NZD": 2, "OMR": 3, "PEN": 2, "PHP": 2, "PKR": 2, "PLN": 2,
	"QAR": 2, "RON": 2, "SAR": 2, "SEK": 2, "SGD": 2, "THB": 2, "TND": 3,
	"TRY": 2, "TWD": 2, "UGX": 0, "USD": 2, "VND": 0, "XAF": 0, "XOF": 0,
	"ZAR": 2,
}

// LookupCurrency returns the currency for an upper-case ISO 4217 code, or an
// EINVALID error naming field "currency".
func LookupCurrency(code string) (Currency, error) {
	exp, ok := currencies[code]
	if !ok {
		return Currency{}, FieldErrorf("currency", "%q is not a supported ISO 4217 currency code", truncate(code, 8))
	}
	return Currency{Code: code, Exponent: exp}, nil
}

// MustCurrency is LookupCurrency for codes written in the program itself.
func MustCurrency(code string) Currency {
	c, err := LookupCurrency(code)
	if err != nil {
		panic(err)
	}
	return c
}

// CurrencyCodes lists the supported codes in order.
func CurrencyCodes() []string {
	out := make([]string, 0, len(currencies))
	for c := range currencies {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// truncate keeps error messages bounded when they quote caller input.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
