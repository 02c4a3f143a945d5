package signature

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	testKey = "sk_test_0123456789abcdefghijklmnopqrstuv"
	testTS  = "1736933400"
)

var (
	testBody = []byte(`{"event_id":"evt_1","event_type":"card.created","created_at":"2025-01-15T09:30:00Z","shopNo":"SH1234567890","sequence":1,"data":{"cardNo":"crd_1"}}`)
	testNow  = time.Unix(1736933400, 0)
)

func TestSignIsSHA256OfBodyTimestampKey(t *testing.T) {
	// echo -n 'abc' | sha256sum, split across the three parts in every way.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	for _, c := range []struct{ body, ts, key string }{
		{"abc", "", ""}, {"a", "b", "c"}, {"", "ab", "c"}, {"", "", "abc"},
	} {
		if got := Sign([]byte(c.body), c.ts, c.key); got != want {
			t.Errorf("Sign(%q, %q, %q) = %s, want %s", c.body, c.ts, c.key, got, want)
		}
	}
}

func TestVerifyAcceptsSign(t *testing.T) {
	sign := Sign(testBody, testTS, testKey)
	for _, s := range []string{sign, strings.ToUpper(sign)} {
		if err := Verify(testBody, testTS, s, testKey, testNow, 0); err != nil {
			t.Errorf("Verify(%s): %v", s, err)
		}
	}
}

// Any changed byte of the body, timestamp or key is refused.
func TestVerifyRefusesEveryChangedByte(t *testing.T) {
	sign := Sign(testBody, testTS, testKey)
	for i := range testBody {
		for _, x := range []byte{0x01, 0x20, 0x80} {
			b := append([]byte(nil), testBody...)
			b[i] ^= x
			if err := Verify(b, testTS, sign, testKey, testNow, 0); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("body byte %d ^ %#x: err = %v, want ErrBadSignature", i, x, err)
			}
		}
	}
	for i := range testTS {
		for d := byte('0'); d <= '9'; d++ {
			if testTS[i] == d {
				continue
			}
			ts := testTS[:i] + string(d) + testTS[i+1:]
			// Within tolerance the signature fails; further away (or with a
			// leading zero) the timestamp does. Either way: refused.
			if err := Verify(testBody, ts, sign, testKey, testNow, 0); err == nil {
				t.Fatalf("timestamp %s accepted", ts)
			}
		}
	}
	// The last digit, a second off, is within tolerance: the signature fails.
	if err := Verify(testBody, "1736933401", sign, testKey, testNow, 0); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("timestamp +1 s: err = %v, want ErrBadSignature", err)
	}
	for i := range testKey {
		k := []byte(testKey)
		k[i] ^= 0x01
		if err := Verify(testBody, testTS, sign, string(k), testNow, 0); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("key byte %d: err = %v, want ErrBadSignature", i, err)
		}
	}
	for i := range sign {
		s := []byte(sign)
		if s[i] == '0' {
			s[i] = '1'
		} else {
			s[i] = '0'
		}
		if err := Verify(testBody, testTS, string(s), testKey, testNow, 0); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("sign digit %d: err = %v, want ErrBadSignature", i, err)
		}
	}
	// Bytes moved across the boundaries, added or dropped.
	for _, c := range []struct {
		name          string
		body, ts, key string
	}{
		{"body shortened", string(testBody[:len(testBody)-1]), testTS, testKey},
		{"body extended", string(testBody) + " ", testTS, testKey},
		{"key extended", string(testBody), testTS, testKey + "x"},
		{"key shortened", string(testBody), testTS, testKey[1:]},
		{"key empty", string(testBody), testTS, ""},
	} {
		if err := Verify([]byte(c.body), c.ts, sign, c.key, testNow, 0); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: err = %v, want ErrBadSignature", c.name, err)
		}
	}
}

func TestVerifyTolerance(t *testing.T) {
	sign := Sign(testBody, testTS, testKey)
	for _, c := range []struct {
		offset, tolerance time.Duration
		ok                bool
	}{
		{0, 0, true},
		{5 * time.Minute, 0, true},
		{-5 * time.Minute, 0, true},
		{5*time.Minute + time.Second, 0, false},
		{-5*time.Minute - time.Second, 0, false},
		{-time.Hour, 0, false},
		{24 * time.Hour, 0, false},
		{30 * time.Second, 30 * time.Second, true},
		{31 * time.Second, 30 * time.Second, false},
		{-31 * time.Second, 30 * time.Second, false},
		{time.Hour, 2 * time.Hour, true},
		{5 * time.Minute, -1, true}, // ≤ 0: the default
	} {
		err := Verify(testBody, testTS, sign, testKey, testNow.Add(c.offset), c.tolerance)
		if c.ok && err != nil {
			t.Errorf("now%+v tolerance %v: %v", c.offset, c.tolerance, err)
		}
		if !c.ok && !errors.Is(err, ErrStaleTimestamp) {
			t.Errorf("now%+v tolerance %v: err = %v, want ErrStaleTimestamp", c.offset, c.tolerance, err)
		}
	}
}

func TestVerifyHeaders(t *testing.T) {
	sign := Sign(testBody, testTS, testKey)
	for _, c := range []struct {
		name, ts, sign string
		want           error
	}{
		{"no timestamp", "", sign, ErrMissingHeaders},
		{"no sign", testTS, "", ErrMissingHeaders},
		{"neither", "", "", ErrMissingHeaders},
		{"letters", "abc", sign, ErrStaleTimestamp},
		{"negative", "-" + testTS, sign, ErrStaleTimestamp},
		{"plus", "+" + testTS, sign, ErrStaleTimestamp},
		{"space", " " + testTS, sign, ErrStaleTimestamp},
		{"leading zero", "0" + testTS, sign, ErrStaleTimestamp},
		{"fraction", testTS + ".0", sign, ErrStaleTimestamp},
		{"exponent", "1.7369334e9", sign, ErrStaleTimestamp},
		{"milliseconds", testTS + "000", sign, ErrStaleTimestamp},
		{"RFC 3339", "2025-01-15T09:30:00Z", sign, ErrStaleTimestamp},
		{"huge", strings.Repeat("9", 40), sign, ErrStaleTimestamp},
		{"sign too short", testTS, sign[:63], ErrBadSignature},
		{"sign too long", testTS, sign + "0", ErrBadSignature},
		{"sign not hex", testTS, "zz" + sign[2:], ErrBadSignature},
		{"sign base64", testTS, "q6u7/Q==", ErrBadSignature},
		{"sign with prefix", testTS, "sha256=" + sign[7:], ErrBadSignature},
	} {
		err := Verify(testBody, c.ts, c.sign, testKey, testNow, 0)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	for _, s := range []string{"0", "1", "1736933400", "999999999999"} {
		got, err := ParseTimestamp(s)
		if err != nil || strconv.FormatInt(got.Unix(), 10) != s {
			t.Errorf("ParseTimestamp(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "00", "01", "1000000000000", "1_000", "１２", "12a"} {
		if _, err := ParseTimestamp(s); !errors.Is(err, ErrStaleTimestamp) {
			t.Errorf("ParseTimestamp(%q): err = %v", s, err)
		}
	}
}
