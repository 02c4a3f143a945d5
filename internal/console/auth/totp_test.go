package auth

import (
	"testing"
	"time"
)

// RFC 6238 appendix B, SHA-1 rows (the 8-digit codes' last six digits).
func TestTOTPAgainstRFC6238(t *testing.T) {
	key := []byte("12345678901234567890")
	secret := b32.EncodeToString(key)
	for _, tc := range []struct {
		unix int64
		want string
	}{
		{59, "287082"}, {1111111109, "081804"}, {1111111111, "050471"},
		{1234567890, "005924"}, {2000000000, "279037"}, {20000000000, "353130"},
	} {
		got, err := TOTPCode(secret, time.Unix(tc.unix, 0))
		if err != nil || got != tc.want {
			t.Errorf("T=%d: %s %v, want %s", tc.unix, got, err, tc.want)
		}
	}
}

func TestCheckTOTPWindow(t *testing.T) {
	key := []byte("12345678901234567890")
	now := time.Unix(1234567890, 0)
	step := now.Unix() / 30
	for _, tc := range []struct {
		name string
		at   int64 // the step the code is made for
		want int64
	}{
		{"now", step, step}, {"one step early", step - 1, step - 1}, {"one step late", step + 1, step + 1},
		{"two steps early", step - 2, 0}, {"two steps late", step + 2, 0},
	} {
		if got := CheckTOTP(key, hotp(key, tc.at), now); got != tc.want {
			t.Errorf("%s: step %d, want %d", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef", "٠١٢٣٤٥"} {
		if CheckTOTP(key, bad, now) != 0 {
			t.Errorf("code %q accepted", bad)
		}
	}
}
