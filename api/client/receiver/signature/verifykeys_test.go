package signature

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// VerifyKeys accepts a callback that any of its keys signed, in X-Sign or in
// X-Signatures, and nothing else.
func TestVerifyKeys(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := "1800000000"
	body := []byte(`{"event_id":"evt_1","event_type":"card.frozen"}`)
	old, next, other := "sk_old", "sk_new", "sk_other"
	sOld, sNew, sOther := Sign(body, ts, old), Sign(body, ts, next), Sign(body, ts, other)
	for _, tc := range []struct {
		name, sign, sigs string
		keys             []string
		want             error
	}{
		{"X-Sign, its key", sOld, "", []string{old}, nil},
		{"X-Sign, both keys", sOld, "", []string{next, old}, nil},
		{"X-Signatures, the new key", sOld, sOld + " " + sNew, []string{next}, nil},
		{"uppercase", strings.ToUpper(sNew), "", []string{next}, nil},
		{"no key signed it", sOther, sOther, []string{old, next}, ErrBadSignature},
		{"other key's X-Signatures", sOld, sOther, []string{next}, ErrBadSignature},
		{"empty key", sOld, "", []string{""}, ErrBadSignature},
		{"no keys", sOld, "", nil, ErrBadSignature},
		{"five keys", sOld, "", []string{old, old, old, old, old}, ErrBadSignature},
		{"too many signatures", sOld, strings.Repeat(sNew+" ", 5), []string{old}, ErrBadSignature},
		{"not hex", sOld, strings.Repeat("z", 64), []string{old}, ErrBadSignature},
		{"short", sOld[:10], "", []string{old}, ErrBadSignature},
		{"no signature", "", "", []string{old}, ErrMissingHeaders},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyKeys(body, ts, tc.sign, tc.sigs, tc.keys, now, 0)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("VerifyKeys: %v, want %v", err, tc.want)
			}
		})
	}
	if err := VerifyKeys(body, ts, sOld, "", []string{old}, now.Add(time.Hour), 0); !errors.Is(err, ErrStaleTimestamp) {
		t.Errorf("stale: %v", err)
	}
}
