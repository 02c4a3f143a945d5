package rules

// Byte-class helpers of the validators (postings keeps its own: the two
// packages share rules, not unexported helpers).

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// allBytes reports whether every byte of s passes ok.
func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// truncate shortens s to n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
