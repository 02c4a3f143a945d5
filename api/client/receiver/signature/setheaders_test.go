package signature

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// SetHeaders writes what Verify and VerifyKeys check: X-Sign with the first
// key, X-Signatures with every key in order, and refuses a key list it
// cannot sign with without writing anything.
func TestSetHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys []string
		ok   bool
	}{
		{"one key", []string{"sk_a"}, true},
		{"a roll: the old key, then the new", []string{"sk_old", "sk_new"}, true},
		{"as many as a receiver accepts", []string{"k1", "k2", "k3", "k4"}, true},
		{"no key", nil, false},
		{"an empty key", []string{"sk_a", ""}, false},
		{"more than SignaturesMax", []string{"k1", "k2", "k3", "k4", "k5"}, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		err := SetHeaders(h, testBody, testTS, tt.keys...)
		if !tt.ok {
			if err == nil || len(h) != 0 {
				t.Errorf("%s: err %v, headers %v; want a refusal and no header", tt.name, err, h)
			}
			continue
		}
		sigs := strings.Fields(h.Get(HeaderSignatures))
		if err != nil || h.Get(HeaderTimestamp) != testTS || h.Get(HeaderSign) != Sign(testBody, testTS, tt.keys[0]) ||
			len(sigs) != len(tt.keys) {
			t.Errorf("%s: err %v, headers %v", tt.name, err, h)
			continue
		}
		for i, k := range tt.keys {
			if sigs[i] != Sign(testBody, testTS, k) {
				t.Errorf("%s: X-Signatures[%d] is not key %d's", tt.name, i, i)
			}
			// A receiver holding only this key accepts the callback.
			if err := VerifyKeys(testBody, h.Get(HeaderTimestamp), h.Get(HeaderSign), h.Get(HeaderSignatures),
				[]string{k}, testNow, 0); err != nil {
				t.Errorf("%s: a receiver with key %d refuses: %v", tt.name, i, err)
			}
		}
		if err := VerifyKeys(testBody, testTS, h.Get(HeaderSign), h.Get(HeaderSignatures), []string{"sk_other"}, testNow, 0); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: another key verifies: %v", tt.name, err)
		}
	}
}
