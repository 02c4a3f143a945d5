package console

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

// Every value a console user sends — a form field, a query parameter —
// passes the API's one check of text, postings.CheckText, at the door,
// before any handler reads it (docs/console.md, "Forms"): valid UTF-8, no
// NUL or other control character, no bidirectional override, tag or other
// invisible format character, no noncharacter, and a bound in characters.
// A refusal is a 400 naming the field. So no byte that PostgreSQL refuses
// (22021) or that would change how a page, a log line or the audit trail
// reads gets further, whatever page a field belongs to, and a new form is
// covered without anyone remembering to check it. The handlers' own checks
// (a card number's form, a currency in the list) come after.

// fieldCharsDefault bounds a field fieldRules does not name: no console
// field that is not listed needs more.
const fieldCharsDefault = 256

// fieldRule is how one field departs from the default.
type fieldRule struct {
	chars int // the bound in characters
	// secret fields (passwords) are checked for valid UTF-8 and NUL only:
	// CheckPasswordRules is theirs, and a password set under it may hold
	// any other character.
	secret bool
	// lines fields hold one value a line (the IP whitelist): each line is
	// free text; line breaks are their separators.
	lines bool
}

// fieldRules are the fields that are not short one-line text. Bounds are
// the API's or the domain's where there is one (a freeze reason 255, a
// merchant's name 200) and otherwise above what the handler allows, so that
// its own, more precise message is the one a user sees.
var fieldRules = map[string]fieldRule{
	"reason":          {chars: 255}, // api reasonCharsMax, cards.freeze_reason
	"name":            {chars: 200}, // ledger's merchant name
	"callbackUrl":     {chars: 4096},
	"ipWhitelist":     {chars: formBytesMax, lines: true},
	"password":        {chars: 1024, secret: true},
	"currentPassword": {chars: 1024, secret: true},
	"newPassword":     {chars: 1024, secret: true},
	"confirmPassword": {chars: 1024, secret: true},
}

// checkFields checks every query parameter and form field of r (parsing
// the form when the guard has not); the first refusal, naming its field.
func checkFields(r *http.Request) error {
	if err := checkValues(r.URL.Query()); err != nil {
		return err
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	if r.PostForm == nil {
		if err := r.ParseMultipartForm(formBytesMax); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			return postings.FieldErrorf("form", "cannot be read")
		}
	}
	if err := checkValues(r.PostForm); err != nil {
		return err
	}
	if r.MultipartForm != nil {
		return checkValues(r.MultipartForm.Value)
	}
	return nil
}

func checkValues(vs map[string][]string) error {
	for field, values := range vs {
		if !utf8.ValidString(field) || !postings.IsRefText(field) {
			return postings.FieldErrorf("form", "has a field whose name is not [A-Za-z0-9_.:-]")
		}
		for _, v := range values {
			if err := checkField(field, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkField is CheckText under the field's rule.
func checkField(field, v string) error {
	rule, ok := fieldRules[field]
	if !ok {
		rule.chars = fieldCharsDefault
	}
	switch {
	case rule.secret:
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return postings.FieldErrorf(field, "must be valid UTF-8 without NUL")
		}
		if utf8.RuneCountInString(v) > rule.chars {
			return postings.FieldErrorf(field, "is longer than %d characters", rule.chars)
		}
		return nil
	case rule.lines:
		if utf8.RuneCountInString(v) > rule.chars {
			return postings.FieldErrorf(field, "is longer than %d characters", rule.chars)
		}
		for _, line := range strings.Split(strings.ReplaceAll(v, "\r\n", "\n"), "\n") {
			if err := postings.CheckText(field, line, rule.chars); err != nil {
				return err
			}
		}
		return nil
	}
	return postings.CheckText(field, v, rule.chars)
}

// fieldsAdmitted answers 400 naming the field when a value of r is refused;
// false then. The guard calls it for every page and action, after the role.
// A refused action (anything but GET) is a 'refused' row of the audit trail,
// as a refusal for the role is: someone sent an action bytes no form makes.
func (s *Server) fieldsAdmitted(w http.ResponseWriter, r *http.Request) bool {
	if err := checkFields(r); err != nil {
		if sess := sessionOf(r.Context()); sess != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.record(r, sess, "refused", 0, "request.refused", r.URL.Path, host.FieldMessage(err))
		}
		s.fail(w, r, http.StatusBadRequest, host.FieldMessage(err))
		return false
	}
	return true
}
