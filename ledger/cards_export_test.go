package ledger

// SetPANSource replaces how l draws new cards' PANs (nil: at random).
func SetPANSource(l *Ledger, f func(bin string) string) { l.panSource = f }

// NewPAN draws a PAN at random, as a new card does.
var NewPAN = newPAN
