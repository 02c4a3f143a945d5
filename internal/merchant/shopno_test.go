package merchant

import (
	"strings"
	"testing"
)

// IsShopNo accepts exactly what newShopNo draws, with and without cells,
// and nothing the cells' router should take to the directory.
func TestIsShopNo(t *testing.T) {
	for cell := 0; cell <= 9; cell++ {
		for i := 0; i < 100; i++ {
			if s := newShopNo(cell); !IsShopNo(s) {
				t.Fatalf("newShopNo(%d) = %q refused", cell, s)
			}
		}
	}
	for _, s := range []string{"", "SH", "SH123456789", "SH12345678901", "sh1234567890", "SH12345678x0",
		"SH1234567890\n", "ＳＨ1234567890", "SH１234567890", "SH" + strings.Repeat("1", 4096)} {
		if IsShopNo(s) {
			t.Errorf("IsShopNo(%q) = true", s)
		}
	}
}
