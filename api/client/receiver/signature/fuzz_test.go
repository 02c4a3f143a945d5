package signature

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseTimestamp: a timestamp is accepted only when it is the canonical
// decimal form of its value, so that one signed string has one meaning.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"1736933400", "0", "", "-1", "+1", "01", "1e9", "1.5", " 1", "999999999999", "9999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTimestamp(s)
		if err != nil {
			return
		}
		if canon := strconv.FormatInt(got.Unix(), 10); canon != s {
			t.Fatalf("ParseTimestamp(%q) accepted, canonical form %q", s, canon)
		}
	})
}

// FuzzVerify: Verify never panics, and accepts only what Sign produced
// (in either case) for a timestamp within the tolerance.
func FuzzVerify(f *testing.F) {
	body := string(testBody)
	sign := Sign(testBody, testTS, testKey)
	f.Add(body, testTS, sign, testKey, int64(0))
	f.Add(body, testTS, strings.ToUpper(sign), testKey, int64(299))
	f.Add(body, "1736933401", sign, testKey, int64(-301))
	f.Add("", "", "", "", int64(0))
	f.Add(body+"1", "736933400", sign, testKey, int64(0))
	f.Fuzz(func(t *testing.T, body, ts, sign, key string, offset int64) {
		now := time.Unix(1736933400+offset%1000, 0)
		err := Verify([]byte(body), ts, sign, key, now, DefaultTolerance)
		if err != nil {
			return
		}
		parsed, perr := ParseTimestamp(ts)
		if perr != nil {
			t.Fatalf("accepted timestamp %q that does not parse: %v", ts, perr)
		}
		if d := now.Sub(parsed); d > DefaultTolerance || d < -DefaultTolerance {
			t.Fatalf("accepted timestamp %q, %v from now", ts, d)
		}
		if key == "" || strings.ToLower(sign) != Sign([]byte(body), ts, key) {
			t.Fatalf("accepted sign %q for key %q", sign, key)
		}
	})
}
