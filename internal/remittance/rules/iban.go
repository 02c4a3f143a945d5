package rules

import (
	"strconv"
	"strings"

	"github.com/paygate/gateway/postings"
)

// Bank identifiers: IBAN (ISO 13616), BIC (ISO 9362) and the US ABA routing
// number. The validators here return EINVALID errors WITHOUT a field: they
// know nothing of the request shape. Callers name the field with WithField
// (ValidateRemittance reports "beneficiary.account_no", "beneficiary.bank_swift",
// "beneficiary.routing_number").

// ibanSpec is one row of the SWIFT IBAN registry: the total length of the
// IBAN and the structure of its BBAN in the registry's notation, where "8!n"
// is exactly 8 digits, "4!a" exactly 4 upper-case letters and "12!c" exactly
// 12 upper-case letters or digits. The length is written out although the
// structure implies it: the two are checked against each other (init and
// TestIBANRegistryConsistent), which catches a mistyped row.
type ibanSpec struct {
	length int
	bban   string
}

// ibanRegistry is the SWIFT IBAN registry (release of December 2024, 89
// countries). Every country listed here is an "IBAN country": an account in
// it is identified by its IBAN, and ValidateRemittance requires one.
//
// Caveat, on purpose not softened: a few registry members (RU, BY, MN, SD, SO,
// DJ, BI, LY, FK, NI, HN, SV, YE, OM) adopted the IBAN recently or only for
// part of their banks; a payment to a bank there that has no IBAN is refused
// (false rejection) rather than sent with a bare account number.
var ibanRegistry = map[string]ibanSpec{
	"AD": {24, "4!n4!n12!c"},
	"AE": {23, "3!n16!n"},
	"AL": {28, "8!n16!c"},
	"AT": {20, "5!n11!n"},
	"AZ": {28, "4!a20!c"},
	"BA": {20, "3!n3!n8!n2!n"},
	"BE": {16, "3!n7!n2!n"},
	"BG": {22, "4!a4!n2!n8!c"},
	"BH": {22, "4!a14!c"},
	"BI": {27, "5!n5!n11!n2!n"},
	"BR": {29, "8!n5!n10!n1!a1!c"},
	"BY": {28, "4!c4!n16!c"},
	"CH": {21, "5!n12!c"},
	"CR": {22, "4!n14!n"},
	"CY": {28, "3!n5!n16!c"},
	"CZ": {24, "4!n6!n10!n"},
	"DE": {22, "8!n10!n"},
	"DJ": {27, "5!n5!n11!n2!n"},
	"DK": {18, "4!n9!n1!n"},
	"DO": {28, "4!c20!n"},
	"EE": {20, "2!n14!n"},
	"EG": {29, "4!n4!n17!n"},
	"ES": {24, "4!n4!n1!n1!n10!n"},
	"FI": {18, "3!n11!n"},
	"FK": {18, "2!a12!n"},
	"FO": {18, "4!n9!n1!n"},
	"FR": {27, "5!n5!n11!c2!n"},
	"GB": {22, "4!a6!n8!n"},
	"GE": {22, "2!a16!n"},
	"GI": {23, "4!a15!c"},
	"GL": {18, "4!n9!n1!n"},
	"GR": {27, "3!n4!n16!c"},
	"GT": {28, "4!c20!c"},
	"HN": {28, "4!a20!n"},
	"HR": {21, "7!n10!n"},
	"HU": {28, "3!n4!n1!n15!n1!n"},
	"IE": {22, "4!a6!n8!n"},
	"IL": {23, "3!n3!n13!n"},
	"IQ": {23, "4!a3!n12!n"},
	"IS": {26, "4!n2!n6!n10!n"},
	"IT": {27, "1!a5!n5!n12!c"},
	"JO": {30, "4!a4!n18!c"},
	"KW": {30, "4!a22!c"},
	"KZ": {20, "3!n13!c"},
	"LB": {28, "4!n20!c"},
	"LC": {32, "4!a24!c"},
	"LI": {21, "5!n12!c"},
	"LT": {20, "5!n11!n"},
	"LU": {20, "3!n13!c"},
	"LV": {21, "4!a13!c"},
	"LY": {25, "3!n3!n15!n"},
	"MC": {27, "5!n5!n11!c2!n"},
	"MD": {24, "2!c18!c"},
	"ME": {22, "3!n13!n2!n"},
	"MK": {19, "3!n10!c2!n"},
	"MN": {20, "4!n12!n"},
	"MR": {27, "5!n5!n11!n2!n"},
	"MT": {31, "4!a5!n18!c"},
	"MU": {30, "4!a2!n2!n12!n3!n3!a"},
	"NI": {28, "4!a20!n"},
	"NL": {18, "4!a10!n"},
	"NO": {15, "4!n6!n1!n"},
	"OM": {23, "3!n16!c"},
	"PK": {24, "4!a16!c"},
	"PL": {28, "8!n16!n"},
	"PS": {29, "4!a21!c"},
	"PT": {25, "4!n4!n11!n2!n"},
	"QA": {29, "4!a21!c"},
	"RO": {24, "4!a16!c"},
	"RS": {22, "3!n13!n2!n"},
	"RU": {33, "9!n5!n15!c"},
	"SA": {24, "2!n18!c"},
	"SC": {31, "4!a2!n2!n16!n3!a"},
	"SD": {18, "2!n12!n"},
	"SE": {24, "3!n16!n1!n"},
	"SI": {19, "5!n8!n2!n"},
	"SK": {24, "4!n6!n10!n"},
	"SM": {27, "1!a5!n5!n12!c"},
	"SO": {23, "4!n3!n12!n"},
	"ST": {25, "4!n4!n11!n2!n"},
	"SV": {28, "4!a20!n"},
	"TL": {23, "3!n14!n2!n"},
	"TN": {24, "2!n3!n13!n2!n"},
	"TR": {26, "5!n1!n16!c"},
	"UA": {29, "6!n19!c"},
	"VA": {22, "3!n15!n"},
	"VG": {24, "4!a16!n"},
	"XK": {20, "4!n10!n2!n"},
	"YE": {30, "4!a4!n18!c"},
}

// ibanTerritories maps territories that have their own ISO 3166 code but use
// the IBAN of another country (the registry's "includes" notes): an account in
// Jersey has a GB IBAN, one in Réunion a FR IBAN, one in Åland a FI IBAN.
var ibanTerritories = map[string]string{
	"AX": "FI",
	"GF": "FR", "GP": "FR", "MQ": "FR", "RE": "FR", "PF": "FR", "TF": "FR",
	"YT": "FR", "NC": "FR", "BL": "FR", "MF": "FR", "PM": "FR", "WF": "FR",
	"GG": "GB", "IM": "GB", "JE": "GB",
}

// IBAN length bounds of ISO 13616: the shortest registry IBAN (NO) has 15
// characters, the format allows at most 34.
const (
	ibanLenMin = 15
	ibanLenMax = 34
)

// bbanSegment is one "n!t" element of a BBAN structure.
type bbanSegment struct {
	n     int
	class byte // 'n' digits, 'a' upper-case letters, 'c' upper-case alphanumerics
}

// ibanStructures holds the parsed BBAN structure of every registry country.
var ibanStructures = func() map[string][]bbanSegment {
	out := make(map[string][]bbanSegment, len(ibanRegistry))
	for cc, spec := range ibanRegistry {
		segs, total, ok := parseBBANFormat(spec.bban)
		if !ok || total+4 != spec.length {
			panic("postings: IBAN registry row " + cc + " is inconsistent")
		}
		out[cc] = segs
	}
	return out
}()

// parseBBANFormat parses registry notation ("8!n10!n") into segments and the
// total length.
func parseBBANFormat(f string) ([]bbanSegment, int, bool) {
	var segs []bbanSegment
	total := 0
	for f != "" {
		i := 0
		for i < len(f) && isDigit(f[i]) {
			i++
		}
		if i == 0 || i > 2 || i+2 > len(f) || f[i] != '!' {
			return nil, 0, false
		}
		n, _ := strconv.Atoi(f[:i])
		class := f[i+1]
		if n == 0 || (class != 'n' && class != 'a' && class != 'c') {
			return nil, 0, false
		}
		segs = append(segs, bbanSegment{n: n, class: class})
		total += n
		f = f[i+2:]
	}
	return segs, total, len(segs) > 0
}

// ibanPrefixFor returns the country code an IBAN of an account in country
// starts with, and whether country uses the IBAN at all.
func ibanPrefixFor(country string) (string, bool) {
	if _, ok := ibanRegistry[country]; ok {
		return country, true
	}
	if p, ok := ibanTerritories[country]; ok {
		return p, true
	}
	return "", false
}

// IBANLength returns the length of the IBANs of accounts in country (an ISO
// 3166 code), or 0 when the country does not use the IBAN.
func IBANLength(country string) int {
	p, ok := ibanPrefixFor(country)
	if !ok {
		return 0
	}
	return ibanRegistry[p].length
}

// ibanFormatRegexp renders the anchored RE2 expression of the IBANs that start
// with prefix, for the dynamic-fields answer: "^DE[0-9]{2}[0-9]{8}[0-9]{10}$".
func ibanFormatRegexp(prefix string) string {
	var b strings.Builder
	b.WriteString("^" + prefix + "[0-9]{2}")
	for _, s := range ibanStructures[prefix] {
		switch s.class {
		case 'n':
			b.WriteString("[0-9]")
		case 'a':
			b.WriteString("[A-Z]")
		default:
			b.WriteString("[A-Z0-9]")
		}
		b.WriteString("{" + strconv.Itoa(s.n) + "}")
	}
	b.WriteString("$")
	return b.String()
}

// ValidateIBAN checks an IBAN in electronic format (upper case, no spaces):
// a registry country code, the length of that country, the BBAN structure of
// the registry, check digits 02..98, and the ISO 7064 MOD 97-10 checksum (the
// whole IBAN, rearranged, is 1 modulo 97). It does not check that the IBAN
// belongs to a given country; ValidateRemittance does.
func ValidateIBAN(s string) error {
	if len(s) < ibanLenMin || len(s) > ibanLenMax {
		return postings.Errorf(postings.EINVALID, "an IBAN has %d to %d characters, this one %d", ibanLenMin, ibanLenMax, len(s))
	}
	for i := 0; i < len(s); i++ {
		if !isUpperAlnum(s[i]) {
			return postings.Errorf(postings.EINVALID, "an IBAN holds only upper-case letters and digits, without spaces")
		}
	}
	cc := s[:2]
	spec, ok := ibanRegistry[cc]
	if !ok {
		return postings.Errorf(postings.EINVALID, "%q is not a country of the IBAN registry", cc)
	}
	if len(s) != spec.length {
		return postings.Errorf(postings.EINVALID, "an IBAN of %s has %d characters, this one %d", cc, spec.length, len(s))
	}
	if !isDigit(s[2]) || !isDigit(s[3]) {
		return postings.Errorf(postings.EINVALID, "the IBAN check digits (positions 3-4) must be digits")
	}
	if check := int(s[2]-'0')*10 + int(s[3]-'0'); check < 2 || check > 98 {
		return postings.Errorf(postings.EINVALID, "the IBAN check digits %02d are outside 02..98", check)
	}
	pos := 4
	for _, seg := range ibanStructures[cc] {
		for j := 0; j < seg.n; j++ {
			c := s[pos]
			if (seg.class == 'n' && !isDigit(c)) || (seg.class == 'a' && !isUpper(c)) {
				return postings.Errorf(postings.EINVALID, "the IBAN does not follow the %s format %s (character %d)", cc, spec.bban, pos+1)
			}
			pos++
		}
	}
	if ibanMod97(s) != 1 {
		return postings.Errorf(postings.EINVALID, "the IBAN checksum is wrong (mod 97 check failed): a character is mistyped")
	}
	return nil
}

// ibanMod97 computes the ISO 7064 MOD 97-10 remainder of an IBAN made of
// upper-case letters and digits: the first four characters are moved to the
// end and each letter counts as two digits (A=10 … Z=35). The running
// remainder keeps the arithmetic inside an int.
func ibanMod97(s string) int {
	r := 0
	add := func(c byte) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A') + 10) % 97
		}
	}
	for i := 4; i < len(s); i++ {
		add(s[i])
	}
	for i := 0; i < 4 && i < len(s); i++ {
		add(s[i])
	}
	return r
}
