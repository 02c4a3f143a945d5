package metadata

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzParse: the stream's reading of an entry's metadata is
// encoding/json's, whatever the bytes: the same map, or an error for both.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"fee": "cross_border", "facts": "1"}`, `{"a":"b","a":"c"}`, `{"a": 1}`,
		`{"a": "\u00e9"}`, `{"a": "b"} x`, ` { "k" : "v" } `, `{"a": {"b": "c"}}`, `[]`, `{"a": "b",}`, `{"": ""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Parse(b, map[string]string{"stale": "x"})
		var want map[string]string
		wantErr := json.Unmarshal(b, &want)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, encoding/json %v", b, err, wantErr)
		}
		if err == nil && !maps.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("%q: %v, encoding/json %v", b, got, want)
		}
	})
}
