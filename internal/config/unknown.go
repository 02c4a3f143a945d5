package config

import (
	"sort"
	"strings"
)

// Unknown is a GATEWAY_* variable of the environment that no setting
// reads: a misspelt setting would otherwise be ignored in silence, and the
// gateway would run on the default the operator meant to change.
type Unknown struct {
	Name string
	// DidYouMean is the setting within a small edit distance of Name
	// ("" when none is near).
	DidYouMean string
}

// otherVariables are GATEWAY_* variables read by something other than the
// settings (the tests and their tools), so that they are not reported.
var otherVariablePrefixes = []string{"GATEWAY_TEST_", "GATEWAY_UPDATE_SCREENSHOTS"}

// UnknownVariables are the GATEWAY_* variables of environ ("NAME=value"
// pairs, as os.Environ gives them) that no setting reads, in name order,
// each with the nearest setting when one is within a third of its length
// in edits (at least 2): GATEWAY_HOLD_EXPIRE suggests GATEWAY_HOLD_EXPIRY.
func UnknownVariables(environ []string) []Unknown {
	known := map[string]bool{}
	vars := Variables()
	for _, v := range vars {
		known[v] = true
	}
	seen := map[string]bool{}
	var out []Unknown
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "GATEWAY_") || known[name] || seen[name] || isOtherVariable(name) {
			continue
		}
		seen[name] = true
		out = append(out, Unknown{Name: name, DidYouMean: nearest(name, vars)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isOtherVariable(name string) bool {
	for _, p := range otherVariablePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// nearest is the candidate closest to name by edit distance, if it is near
// enough to be a typo rather than another word.
func nearest(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(name, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(name)/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes: variable
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
