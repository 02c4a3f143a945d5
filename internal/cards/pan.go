package cards

import (
	"crypto/rand"
	"math/big"
)

// panFingerprintKey is violated when a new card drew a PAN already issued
// (the database finds it by its fingerprint): the writer runs the batch
// again, which draws new ones (Domain.RetryConstraints).
const panFingerprintKey = "cards_pan_fingerprint_key"

// panRef is the reference to a card's PAN in the vault: it names the sealed
// value without revealing anything about the number.
func panRef(cardNo string) string { return "pan_" + cardNo[len("crd_"):] }

// newPAN draws a PAN for a new card. A PAN already issued is found by the
// database (cards_pan_fingerprint_key) and the batch runs again with new
// draws (the writer treats that violation as transient).
func (s *Service) newPAN(bin string) string {
	if s.panSource != nil {
		return s.panSource(bin)
	}
	return cellPAN(bin, s.cellNumber)
}

// cellPAN draws a PAN of cell number (0: no cells) on bin. A cell issues
// from its own account range within the BIN, the digit after it being the
// cell's number: PANs are unique across cells by construction
// (docs/scaling.md, "Ids").
func cellPAN(bin string, cell int) string {
	if cell > 0 {
		return newPAN(bin + string(rune('0'+cell)))
	}
	return newPAN(bin)
}

// newPAN returns bin (or a cell's range within it), random digits and a
// Luhn check digit: 16 digits. A
// six-digit BIN leaves 10⁹ PANs, so a busy BIN draws one already issued
// now and then (a 50 % chance by ~37,000 cards).
func newPAN(bin string) string {
	digits := make([]byte, 0, 16)
	digits = append(digits, bin...)
	for len(digits) < 15 {
		n, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			panic(err)
		}
		digits = append(digits, byte('0'+n.Int64()))
	}
	return string(append(digits, luhnCheckDigit(string(digits))))
}

// luhnCheckDigit returns the digit that makes payload+digit Luhn-valid.
func luhnCheckDigit(payload string) byte {
	sum := 0
	for i := len(payload) - 1; i >= 0; i-- {
		d := int(payload[i] - '0')
		if (len(payload)-1-i)%2 == 0 { // doubled: these positions are odd from the check digit
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// LuhnValid reports whether a digit string passes the Luhn check.
func LuhnValid(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return luhnCheckDigit(s[:len(s)-1]) == s[len(s)-1]
}
