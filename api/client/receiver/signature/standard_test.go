package signature

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference vector (the standard's README and the
// svix libraries' tests): our HMAC must give the same signature as every
// other implementation, or off-the-shelf verifiers refuse our callbacks.
func TestSignStandardReferenceVector(t *testing.T) {
	t.Parallel()
	got, err := SignStandard("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", []byte(`{"test": 2432232314}`),
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; err != nil || got != want {
		t.Fatalf("SignStandard = %q, %v; want %q", got, err, want)
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := NewSecret()
	if err != nil || !strings.HasPrefix(a, SecretPrefix) || CheckSecret(a) != nil {
		t.Fatalf("NewSecret = %q, %v", a, err)
	}
	if b, _ := NewSecret(); b == a {
		t.Fatal("two secrets are equal")
	}
}

func TestSetStandardHeadersAndVerify(t *testing.T) {
	t.Parallel()
	old, _ := NewSecret()
	cur, _ := NewSecret()
	other, _ := NewSecret()
	const id = "evt_7w2k9d4m1q8z3x6c5v0b2n7r"
	tests := []struct {
		name    string
		secrets []string
		ok      bool
	}{
		{"one secret", []string{cur}, true},
		{"a roll: both", []string{old, cur}, true},
		{"no secret", nil, false},
		{"an sk_ key is not a secret", []string{"sk_abc"}, false},
		{"bad base64", []string{"whsec_!!!"}, false},
		{"too short", []string{"whsec_AAAA"}, false},
		{"more than SignaturesMax", []string{cur, cur, cur, cur, cur}, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		err := SetStandardHeaders(h, id, testTS, testBody, tt.secrets...)
		if !tt.ok {
			if err == nil || len(h) != 0 {
				t.Errorf("%s: err %v, headers %v; want a refusal and no header", tt.name, err, h)
			}
			continue
		}
		if err != nil || h.Get(HeaderWebhookID) != id || h.Get(HeaderWebhookTimestamp) != testTS ||
			len(strings.Fields(h.Get(HeaderWebhookSignature))) != len(tt.secrets) {
			t.Fatalf("%s: err %v, headers %v", tt.name, err, h)
		}
		for i, s := range tt.secrets {
			if err := VerifyStandard(testBody, id, testTS, h.Get(HeaderWebhookSignature), []string{s}, testNow, 0); err != nil {
				t.Errorf("%s: a receiver with secret %d refuses: %v", tt.name, i, err)
			}
		}
		if err := VerifyStandard(testBody, id, testTS, h.Get(HeaderWebhookSignature), []string{other}, testNow, 0); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: another secret verifies: %v", tt.name, err)
		}
	}
}

// VerifyStandard refuses every alteration of what was signed, and stale or
// missing headers, with the error a handler maps to its status.
func TestVerifyStandardRefusals(t *testing.T) {
	t.Parallel()
	sec, _ := NewSecret()
	const id = "evt_a"
	sig, _ := SignStandard(id, testTS, testBody, sec)
	tests := []struct {
		name         string
		body         string
		id, ts, sigs string
		now          time.Time
		want         error
	}{
		{"genuine", string(testBody), id, testTS, sig, testNow, nil},
		{"genuine beside an unknown version", string(testBody), id, testTS, "v2,abc " + sig, testNow, nil},
		{"body changed", string(testBody) + " ", id, testTS, sig, testNow, ErrBadSignature},
		{"id changed", string(testBody), "evt_b", testTS, sig, testNow, ErrBadSignature},
		{"only another version", string(testBody), id, testTS, "v1a," + sig[3:], testNow, ErrBadSignature},
		{"not base64", string(testBody), id, testTS, "v1,???", testNow, ErrBadSignature},
		{"stale", string(testBody), id, testTS, sig, testNow.Add(6 * time.Minute), ErrStaleTimestamp},
		{"timestamp not seconds", string(testBody), id, "1e9", sig, testNow, ErrStaleTimestamp},
		{"no id", string(testBody), "", testTS, sig, testNow, ErrMissingStandardHeaders},
		{"no signature", string(testBody), id, testTS, "", testNow, ErrMissingStandardHeaders},
	}
	for _, tt := range tests {
		err := VerifyStandard([]byte(tt.body), tt.id, tt.ts, tt.sigs, []string{sec}, tt.now, 0)
		if (tt.want == nil && err != nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// FuzzVerifyStandard: never panics, and accepts only what SignStandard made.
func FuzzVerifyStandard(f *testing.F) {
	const sec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	sig, _ := SignStandard("evt_a", testTS, testBody, sec)
	f.Add(string(testBody), "evt_a", testTS, sig)
	f.Add("", "", "", "")
	f.Add(string(testBody), "evt_a", testTS, "v1, v1,,"+sig)
	f.Fuzz(func(t *testing.T, body, id, ts, sigs string) {
		if VerifyStandard([]byte(body), id, ts, sigs, []string{sec}, testNow, 0) != nil {
			return
		}
		want, err := SignStandard(id, ts, []byte(body), sec)
		if err != nil || !strings.Contains(sigs, want) {
			t.Fatalf("accepted %q for id %q ts %q body %q", sigs, id, ts, body)
		}
	})
}
