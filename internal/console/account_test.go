package console

import (
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

// The account form's checks, before any password is: each refusal names
// its field; what passes is only what the password rules allow.
func TestCheckPasswordForm(t *testing.T) {
	const cur, pw = "correct horse battery", "a brand new passphrase"
	for _, c := range []struct {
		name                 string
		cur, code, pw, again string
		totp                 bool
		field                string // "" when the form passes
	}{
		{"good", cur, "", pw, pw, false, ""},
		{"good with a code", cur, "012345", pw, pw, true, ""},
		{"exactly 12 bytes", cur, "", "abcdefghijkl", "abcdefghijkl", false, ""},
		{"exactly 128 bytes", cur, "", strings.Repeat("é", 64), strings.Repeat("é", 64), false, ""},
		{"look-alike letters are letters", cur, "", "раssword-12345", "раssword-12345", false, ""},
		{"no current", "", "", pw, pw, false, "currentPassword"},
		{"current past 128 bytes", strings.Repeat("x", 129), "", pw, pw, false, "currentPassword"},
		{"no code", cur, "", pw, pw, true, "totp"},
		{"five digits", cur, "12345", pw, pw, true, "totp"},
		{"seven digits", cur, "1234567", pw, pw, true, "totp"},
		{"full-width digits", cur, "０１２３４５", pw, pw, true, "totp"},
		{"11 bytes", cur, "", "abcdefghijk", "abcdefghijk", false, "newPassword"},
		{"129 bytes", cur, "", strings.Repeat("é", 64) + "x", strings.Repeat("é", 64) + "x", false, "newPassword"},
		{"tab", cur, "", "a new\tpassphrase", "a new\tpassphrase", false, "newPassword"},
		{"NUL", cur, "", "a new passphrase\x00", "a new passphrase\x00", false, "newPassword"},
		{"DEL", cur, "", "a new passphrase\x7f", "a new passphrase\x7f", false, "newPassword"},
		{"mismatch", cur, "", pw, pw + " ", false, "confirmPassword"},
		{"no confirmation", cur, "", pw, "", false, "confirmPassword"},
		{"the current one", cur, "", cur, cur, false, "newPassword"},
	} {
		err := checkPasswordForm(c.cur, c.code, c.pw, c.again, c.totp)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.field != "" && (err == nil || postings.AsError(err).Field != c.field || postings.ErrorCode(err) != postings.EINVALID):
			t.Errorf("%s: %v, want a refusal naming %s", c.name, err, c.field)
		}
	}
}
