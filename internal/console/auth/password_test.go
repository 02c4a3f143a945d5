package auth

import (
	"strings"
	"testing"
)

func TestPasswordHashRoundTrip(t *testing.T) {
	old := newHashParams
	newHashParams = hashParams{argonTime, argonMemoryKiB, argonThreads} // the real ones, whatever ran before
	defer func() { newHashParams = old }()
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %s does not carry the documented parameters", h)
	}
	h2, _ := HashPassword("correct horse battery")
	if h == h2 {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{
		{"correct horse battery", true}, {"correct horse batterY", false}, {"", false},
		{"correct horse battery ", false}, {strings.Repeat("x", 129), false},
	} {
		if got := CheckPassword(h, tc.pw); got != tc.want {
			t.Errorf("CheckPassword(%q) = %v", tc.pw, got)
		}
	}
}

// A hash edited in the database cannot make a login allocate without
// bound, and a malformed one matches nothing.
func TestCheckPasswordRefusesOddHashes(t *testing.T) {
	for _, h := range []string{
		"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5",
		"$argon2id$v=18$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5",
		"$argon2id$v=19$m=4194304,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5", // 4 GiB
		"$argon2id$v=19$m=19456,t=1000,p=1$c2FsdHNhbHRzYWx0$a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$!!$a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$",
	} {
		if CheckPassword(h, "x") {
			t.Errorf("%q matched", h)
		}
	}
}

func TestPasswordRules(t *testing.T) {
	for _, tc := range []struct {
		pw string
		ok bool
	}{
		{"short", false}, {"twelve chars", true}, {strings.Repeat("a", 128), true}, {strings.Repeat("a", 129), false},
		{"tab\tinside the password", false}, {"nul\x00inside the password", false}, {"ünïcödé pässwörd", true},
	} {
		if err := CheckPasswordRules(tc.pw); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.pw, err)
		}
	}
}
