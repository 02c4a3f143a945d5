package rules

import (
	"strings"

	"github.com/paygate/gateway/postings"
)

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
