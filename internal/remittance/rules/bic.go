package rules

import (
	"github.com/paygate/gateway/postings"
)

// bicPattern documents the BIC format for the dynamic-fields answer.
const bicPattern = "^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$"

// ValidateBIC checks a BIC (ISO 9362, the "SWIFT code"): 8 or 11 upper-case
// characters, a 4-letter institution code, the 2-letter ISO 3166 country of
// the institution, a 2-character location code and an optional 3-character
// branch code. The country letters must be a known country code.
func ValidateBIC(s string) error {
	if len(s) != 8 && len(s) != 11 {
		return postings.Errorf(postings.EINVALID, "a BIC has 8 or 11 characters, this one %d", len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := isUpperAlnum(c)
		if i < 6 {
			ok = isUpper(c)
		}
		if !ok {
			return postings.Errorf(postings.EINVALID, "a BIC is 4 letters (bank), 2 letters (country), 2 letters or digits (location) and optionally 3 letters or digits (branch), upper case")
		}
	}
	if !IsCountryCode(s[4:6]) {
		return postings.Errorf(postings.EINVALID, "the BIC country letters %q are not an ISO 3166 country code", s[4:6])
	}
	return nil
}

// sameIBANFamily reports whether two country codes are equal or one is a
// territory banking under the other's IBAN (JE and GB, RE and FR, AX and FI).
// A bank in Réunion may carry a FR or a RE BIC; both are accepted.
func sameIBANFamily(a, b string) bool {
	if a == b {
		return true
	}
	pa, oka := ibanPrefixFor(a)
	pb, okb := ibanPrefixFor(b)
	return oka && okb && pa == pb
}

// abaPattern documents the routing number format for the dynamic-fields answer.
const abaPattern = "^[0-9]{9}$"

// ValidateABARouting checks a US ABA routing transit number: 9 digits whose
// first two lie in a Federal Reserve range (00-12 government and banks, 21-32
// thrifts, 61-72 electronic, 80 traveller's cheques) and whose weighted sum
// 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) is a multiple of 10.
func ValidateABARouting(s string) error {
	if len(s) != 9 || !allBytes(s, isDigit) {
		return postings.Errorf(postings.EINVALID, "an ABA routing number is exactly 9 digits")
	}
	if p := int(s[0]-'0')*10 + int(s[1]-'0'); !(p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p == 80) {
		return postings.Errorf(postings.EINVALID, "an ABA routing number cannot start with %02d", p)
	}
	sum := 0
	weights := [3]int{3, 7, 1}
	for i := 0; i < 9; i++ {
		sum += weights[i%3] * int(s[i]-'0')
	}
	if sum%10 != 0 {
		return postings.Errorf(postings.EINVALID, "the ABA routing number checksum is wrong: a digit is mistyped")
	}
	return nil
}

func isUpper(b byte) bool      { return b >= 'A' && b <= 'Z' }
func isUpperAlnum(b byte) bool { return isUpper(b) || isDigit(b) }
