package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// X-Request-Id: the client's token is echoed whole up to 128 characters of
// A-Z a-z 0-9 _ . : - (docs/errors.md); anything else is replaced whole by
// one the gateway makes, never trimmed.
func TestRequestIDEcho(t *testing.T) {
	t.Parallel()
	h := NewServer(Deps{})
	tests := []struct {
		name string
		ids  []string // the header's values, as sent
		echo bool
	}{
		{"short", []string{"abc-123"}, true},
		{"64 characters", []string{strings.Repeat("a", 64)}, true},
		{"65 characters", []string{strings.Repeat("b", 65)}, true},
		{"128 characters", []string{strings.Repeat("c", 127) + "."}, true},
		{"every allowed byte", []string{"AZaz09_.:-"}, true},
		{"12-digit run", []string{"order-123456789012"}, true},
		{"129 characters", []string{strings.Repeat("d", 129)}, false},
		{"a space", []string{"a b"}, false},
		{"a slash", []string{"a/b"}, false},
		{"non-ASCII", []string{"req-é"}, false},
		{"control byte", []string{"req\x01"}, false},
		{"invalid UTF-8", []string{"req\x80"}, false},
		{"SQL", []string{"' OR 1=1 --"}, false},
		{"a card number", []string{"4111111111111111"}, false},
		{"13-digit run", []string{"id-1234567890123-x"}, false},
		{"sent twice", []string{"one", "two"}, false},
		{"empty", []string{""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			req.Header["X-Request-Id"] = tt.ids
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			got := w.Header().Values("X-Request-Id")
			if len(got) != 1 {
				t.Fatalf("X-Request-Id %q: want one value", got)
			}
			if tt.echo {
				if got[0] != tt.ids[0] {
					t.Errorf("echoed %q, want %q", got[0], tt.ids[0])
				}
				return
			}
			if !strings.HasPrefix(got[0], "req_") || len(got[0]) != len("req_")+24 {
				t.Errorf("%q replaced by %q, want one the gateway makes (req_ and 24 characters)", tt.ids, got[0])
			}
		})
	}
}
