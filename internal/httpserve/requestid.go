package httpserve

import (
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strings"
)

// requestIDBytesMax bounds an X-Request-Id taken from the client
// (docs/errors.md).
const requestIDBytesMax = 128

// requestIDDigitRunMax is the longest run of digits a client's request id
// may hold: a longer one could be a card number (13 to 19 digits), which
// must never reach a log line.
const requestIDDigitRunMax = 12

// RequestID is the client's X-Request-Id when it is 1 to 128 characters of
// A-Z a-z 0-9 _ . : -, sent once, with no run of more than 12 digits; else
// "", and the gateway makes its own (NewRequestID). An id is taken or
// replaced whole, never trimmed or escaped, so that what is echoed and
// logged is either exactly the client's or plainly the gateway's.
func RequestID(h http.Header) string {
	vs := h.Values("X-Request-Id")
	if len(vs) != 1 {
		return ""
	}
	id := vs[0]
	if id == "" || len(id) > requestIDBytesMax {
		return ""
	}
	digits := 0
	for i := 0; i < len(id); i++ {
		if !isRequestIDByte(id[i]) {
			return ""
		}
		if id[i] >= '0' && id[i] <= '9' {
			digits++
		} else {
			digits = 0
		}
		if digits > requestIDDigitRunMax {
			return ""
		}
	}
	return id
}

func isRequestIDByte(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
		b == '_' || b == '.' || b == ':' || b == '-'
}

// NewRequestID makes a request id: 15 random bytes in lower-case base32.
// Not hex: a long run of decimal digits would look like a card number to
// the log scanners that guard against PANs.
func NewRequestID() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return "req_" + strings.ToLower(base32.StdEncoding.EncodeToString(b))
}
