package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/postings"
)

// The strict JSON decoder of request bodies. encoding/json alone would take
// duplicate keys (last wins), match field names case-insensitively and read
// amounts through float64; a body is instead walked token by token against
// a list of fields, so that every refusal names its field.

// amountText is an amount as the client wrote it: a JSON number or a string
// holding a decimal. It is parsed only once the currency is known.
type amountText string

// stringMembers is a nested JSON object whose members are all strings, such
// as a remittance's beneficiary. Errors name a member "<field>.<member>".
type stringMembers map[string]string

// field is one member of a request object. into is *string (a JSON string),
// *amountText (a number or a decimal string), *[]string (an array of
// strings, at most itemsMax of them) or *stringMembers (an object of string
// members, each at most once, at most itemsMax of them). JSON null counts as
// absent, also for a member of a stringMembers object.
type field struct {
	name     string
	required bool
	into     any
	itemsMax int
}

// fieldNameBytesMax bounds an unknown field's name quoted back in a message.
const fieldNameBytesMax = 64

// readBody reads the whole body under the limitBody bound: a larger one is
// 413, one that stalls 408, an unreadable one 400.
func readBody(c *gin.Context) ([]byte, error) {
	raw, err := io.ReadAll(c.Request.Body)
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return nil, errBodyTooLarge(mb.Limit)
	}
	var bt *bodyTimeoutError
	if errors.As(err, &bt) {
		return nil, errBodyTimeout(bt) // 408 (guardBody)
	}
	if err != nil {
		return nil, postings.FieldErrorf("body", "could not be read")
	}
	return raw, nil
}

// decodeObject decodes raw, which must hold exactly one JSON object whose
// members are all among fields, each at most once and of the right type,
// with every required field present.
func decodeObject(raw []byte, fields []field) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == io.EOF {
		return postings.FieldErrorf("body", "is required: a JSON object")
	}
	if err != nil {
		return syntaxError(err)
	}
	if tok != json.Delim('{') {
		return postings.FieldErrorf("body", "must be a JSON object")
	}
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err)
		}
		name, _ := tok.(string)
		f := findField(fields, name)
		if f == nil {
			return postings.FieldErrorf(quoteName(name), "is not a known field")
		}
		if _, dup := seen[name]; dup {
			return postings.FieldErrorf(quoteName(name), "appears more than once")
		}
		present, err := decodeValue(dec, f)
		if err != nil {
			return err
		}
		seen[name] = present
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return postings.FieldErrorf("body", "has data after the JSON object")
	}
	var missing []string
	for _, f := range fields {
		if f.required && !seen[f.name] {
			missing = append(missing, f.name)
		}
	}
	if len(missing) == 1 {
		return postings.FieldErrorf(missing[0], "is required")
	}
	if len(missing) > 1 {
		return postings.FieldErrorf(strings.Join(missing, ", "), "are required")
	}
	return nil
}

func findField(fields []field, name string) *field {
	for i := range fields {
		if fields[i].name == name {
			return &fields[i]
		}
	}
	return nil
}

// decodeValue reads the value of f; it reports whether it was present (not
// null). A value of the wrong type is refused without being read further.
func decodeValue(dec *json.Decoder, f *field) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, syntaxError(err)
	}
	if tok == nil {
		return false, nil
	}
	switch into := f.into.(type) {
	case *string:
		s, ok := tok.(string)
		if !ok {
			return false, postings.FieldErrorf(f.name, "must be a string")
		}
		*into = s
	case *amountText:
		switch v := tok.(type) {
		case json.Number:
			*into = amountText(v)
		case string:
			*into = amountText(v)
		default:
			return false, postings.FieldErrorf(f.name, "must be a number or a string holding a decimal number")
		}
	case *[]string:
		if tok != json.Delim('[') {
			return false, postings.FieldErrorf(f.name, "must be an array of strings")
		}
		var items []string
		for dec.More() {
			if len(items) == f.itemsMax {
				return false, postings.FieldErrorf(f.name, "has more than %d entries", f.itemsMax)
			}
			tok, err := dec.Token()
			if err != nil {
				return false, syntaxError(err)
			}
			s, ok := tok.(string)
			if !ok {
				return false, postings.FieldErrorf(f.name, "must be an array of strings")
			}
			items = append(items, s)
		}
		if _, err := dec.Token(); err != nil { // the closing bracket
			return false, syntaxError(err)
		}
		*into = items
	case *stringMembers:
		if tok != json.Delim('{') {
			return false, postings.FieldErrorf(f.name, "must be a JSON object of strings")
		}
		members, err := decodeStringMembers(dec, f)
		if err != nil {
			return false, err
		}
		*into = members
	default:
		panic("api: field of unknown kind " + f.name)
	}
	return true, nil
}

// decodeStringMembers reads the members of an object whose opening brace
// has been read, and its closing brace.
func decodeStringMembers(dec *json.Decoder, f *field) (stringMembers, error) {
	members := stringMembers{}
	seen := map[string]bool{}
	for dec.More() {
		if len(seen) == f.itemsMax {
			return nil, postings.FieldErrorf(f.name, "has more than %d members", f.itemsMax)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		name, _ := tok.(string)
		path := f.name + "." + quoteName(name)
		if seen[name] {
			return nil, postings.FieldErrorf(path, "appears more than once")
		}
		seen[name] = true
		if tok, err = dec.Token(); err != nil {
			return nil, syntaxError(err)
		}
		switch v := tok.(type) {
		case nil:
		case string:
			members[name] = v
		default:
			return nil, postings.FieldErrorf(path, "must be a string")
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntaxError(err)
	}
	return members, nil
}

func syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return postings.FieldErrorf("body", "is not valid JSON (%s at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		return postings.FieldErrorf("body", "is not valid JSON (unexpected end)")
	}
	return postings.FieldErrorf("body", "is not valid JSON")
}

// quoteName bounds a client-chosen field name quoted in a message.
func quoteName(name string) string {
	if len(name) > fieldNameBytesMax {
		name = name[:fieldNameBytesMax] + "…"
	}
	if name == "" {
		return `""`
	}
	return strings.ToValidUTF8(name, "�")
}

// Field checks shared by the requests.

// checkCardNo checks a card token: 1 to 64 characters of [A-Za-z0-9_.:-].
func checkCardNo(name, s string) error {
	if !postings.IsRefText(s) {
		return postings.FieldErrorf(name, "must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'")
	}
	return nil
}

// parseCurrency checks a currency code (three upper-case letters) and looks
// it up.
func parseCurrency(name, s string) (postings.Currency, error) {
	if len(s) != 3 || !isUpper(s[0]) || !isUpper(s[1]) || !isUpper(s[2]) {
		return postings.Currency{}, postings.FieldErrorf(name, "must be a three-letter upper-case ISO 4217 code")
	}
	cur, err := postings.LookupCurrency(s)
	if err != nil {
		return postings.Currency{}, postings.WithField(err, name)
	}
	return cur, nil
}

// parseMoney reads a positive amount ("amount") in the currency named by
// "currency", with no more decimals than the currency has; an error names
// the field at fault.
func parseMoney(currency string, amount amountText) (postings.Currency, int64, error) {
	cur, err := parseCurrency("currency", currency)
	if err != nil {
		return postings.Currency{}, 0, err
	}
	minor, err := postings.ParseAmount(string(amount), cur)
	if err != nil {
		return postings.Currency{}, 0, postings.WithField(err, "amount")
	}
	return cur, minor, nil
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// checkText checks free text stored for the merchant: at most n characters,
// no control characters (PostgreSQL text cannot hold NUL).
func checkText(name, s string, n int) error {
	if utf8.RuneCountInString(s) > n {
		return postings.FieldErrorf(name, "is longer than %d characters", n)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return postings.FieldErrorf(name, "must not contain control characters")
		}
	}
	return nil
}

// checkBIN checks a BIN: six to eight digits.
func checkBIN(name, s string) error {
	if len(s) < 6 || len(s) > 8 {
		return postings.FieldErrorf(name, "must be 6 to 8 digits")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return postings.FieldErrorf(name, "must be 6 to 8 digits")
		}
	}
	return nil
}

// callbackURLBytesMax bounds callback_url.
const callbackURLBytesMax = 2048

// checkCallbackURL checks an absolute http or https URL with a host.
func checkCallbackURL(name, s string) error {
	if len(s) > callbackURLBytesMax {
		return postings.FieldErrorf(name, "is longer than %d bytes", callbackURLBytesMax)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return postings.FieldErrorf(name, "must be an absolute http or https URL")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] == 0x7f {
			return postings.FieldErrorf(name, "must be an absolute http or https URL")
		}
	}
	return nil
}
