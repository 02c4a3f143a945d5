package httpserve

import (
	"strings"
	"testing"
)

// How the first bytes decide; anything that is not an HTTP method and its
// space goes to TLS untouched (which refuses it if it is not TLS).
func TestSniffFirstBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want sniffResult
	}{
		{"", sniffUndecided},
		{"\x16\x03\x01\x02\x00", sniffOther},
		{"\x16", sniffOther},
		{"G", sniffUndecided},
		{"GET", sniffUndecided},
		{"GET ", sniffPlainHTTP},
		{"POST /", sniffPlainHTTP},
		{"OPTIONS ", sniffPlainHTTP},
		{"CONNECT ", sniffPlainHTTP},
		{"PRI * HTTP/2.0", sniffPlainHTTP},
		{"GE ", sniffOther},
		{"get /", sniffOther},
		{"ABCDEFGH", sniffOther},
		{"\x80\x2e\x01", sniffOther}, // an SSLv2-style hello
		{"SSH-2.0", sniffOther},
		{"\r\nGET ", sniffOther},
	}
	for _, tt := range tests {
		if got := sniffFirstBytes([]byte(tt.in)); got != tt.want {
			t.Errorf("%q: %d, want %d", tt.in, got, tt.want)
		}
	}
}

// sniffFirstBytes never mistakes a TLS record for HTTP and never asks for
// more than plainHTTPSniffBytesMax bytes.
func FuzzSniffFirstBytes(f *testing.F) {
	for _, s := range []string{"GET /", "\x16\x03\x01", "OPTIONS *", "ABCDEFGHIJ", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := sniffFirstBytes(b)
		if len(b) > 0 && b[0] == tlsRecordTypeHandshake && got != sniffOther {
			t.Fatalf("%q: a TLS record taken for %d", b, got)
		}
		if len(b) >= plainHTTPSniffBytesMax && got == sniffUndecided {
			t.Fatalf("%q: undecided after %d bytes", b, len(b))
		}
		if got == sniffPlainHTTP && !strings.Contains(string(b), " ") {
			t.Fatalf("%q: plain HTTP without a space", b)
		}
	})
}
