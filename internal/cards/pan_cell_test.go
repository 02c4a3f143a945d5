package cards_test

import (
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cards"
)

// A cell issues from its own account range: the digit after the BIN is
// its number, so that two cells never draw the same PAN. Without cells
// (cell 0) the digit is random, as before.
func TestCellPANRange(t *testing.T) {
	t.Parallel()
	digits := map[byte]bool{}
	for range 200 {
		for _, bin := range []string{"453201", "45320199"} {
			p := cards.CellPAN(bin, 3)
			if len(p) != 16 || !strings.HasPrefix(p, bin+"3") || !cards.LuhnValid(p) {
				t.Fatalf("cell 3 drew %s on %s", p, bin)
			}
		}
		digits[cards.CellPAN("453201", 0)[6]] = true
	}
	if len(digits) < 5 {
		t.Errorf("without cells the digit after the BIN took %d values in 200 draws", len(digits))
	}
}
