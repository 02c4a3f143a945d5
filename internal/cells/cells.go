// Package cells is the layout of merchants over several PostgreSQL
// formations ("cells", docs/scaling.md): each cell's identity (its name and
// number, written once by `gateway cells init`), the directory that maps
// shop numbers and merchant ids to cells (tables in the home cell, the
// first of GATEWAY_CELLS), and the rules that route an id to its cell
// without a lookup. It moves nothing: moving a merchant is
// internal/cellmove's, on these tables.
package cells

import (
	"fmt"
	"regexp"
	"strings"
)

// NumberMax is the highest cell number: the number is one digit of the
// shop number and of the PAN's account range (docs/scaling.md, "Ids").
const NumberMax = 9

// nameRe is a cell's name: two characters, a letter then a letter or a
// digit. Fixed at two so that a cell-carrying id (crd_<cell>…) keeps the
// length and alphabet of every id minted before cells, and its cell is
// read at a fixed place.
var nameRe = regexp.MustCompile(`^[a-z][a-z0-9]$`)

// CheckName refuses a name that is not a cell's.
func CheckName(name string) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("cell name %q: want two characters, a lower-case letter then a lower-case letter or digit (a1, eu)", name)
	}
	return nil
}

// The prefixes of the ids that carry their cell.
const (
	CardPrefix = "crd_"
	AuthPrefix = "auth_"
	// RemitPrefix is a remittance's (remittance.RemitPrefix): the rail's
	// reports name only it (txId).
	RemitPrefix = "rmt_"
)

// OfID is the cell an id minted in a cell names ("crd_a1…" is a1's), and
// false when id has none of the prefixes or is too short to carry a cell. It
// does not say the cell exists: the router checks that.
func OfID(id string) (string, bool) {
	for _, p := range []string{CardPrefix, AuthPrefix, RemitPrefix} {
		if rest, ok := strings.CutPrefix(id, p); ok && len(rest) > 2 {
			if name := rest[:2]; CheckName(name) == nil {
				return name, true
			}
			return "", false
		}
	}
	return "", false
}
