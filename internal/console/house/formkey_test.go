package house

import (
	"strings"
	"testing"
)

func TestFormKey(t *testing.T) {
	for _, k := range []formKey{depositFormKey, rollFormKey, sanctionsFormKey} {
		key, err := k.new()
		if err != nil {
			t.Fatal(err)
		}
		if !k.valid(key) {
			t.Errorf("%s: its own key %q refused", k, key)
		}
		other, _ := depositFormKey.new()
		if k != depositFormKey && k.valid(other) {
			t.Errorf("%s: a deposit key %q accepted", k, other)
		}
		hex := strings.TrimPrefix(key, string(k))
		for _, bad := range []string{
			"", string(k), string(k) + hex[:31], string(k) + hex + "0", string(k) + strings.ToUpper(hex),
			string(k) + hex[:31] + "g", string(k) + hex[:31] + "\n", " " + key, strings.ToUpper(string(k)) + hex,
			string(k) + hex[:30] + "é",
		} {
			if k.valid(bad) {
				t.Errorf("%s: %q accepted", k, bad)
			}
		}
	}
}
