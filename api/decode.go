package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/httpserve"
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

// tokens reads the JSON tokens of a body and checks the bytes of every
// string as written: encoding/json replaces invalid UTF-8, and escapes of
// unpaired surrogates (\ud800), with U+FFFD without a word, so the check
// must come before it. A string that is not valid UTF-8 is refused naming
// the field it belongs to.
type tokens struct {
	*json.Decoder
	raw []byte
	end int64 // where the last token ended in raw
}

func newTokens(raw []byte) *tokens {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return &tokens{Decoder: dec, raw: raw}
}

// next reads the next token; field is what a refusal of its text names.
// Decoder errors are returned as they are (io.EOF included).
func (t *tokens) next(field string) (json.Token, error) {
	tok, err := t.Token()
	if err != nil {
		return nil, err
	}
	start, end := t.end, t.InputOffset()
	t.end = end
	if _, isString := tok.(string); isString && !rawJSONTextValid(t.raw[start:end]) {
		return nil, postings.FieldErrorf(field, "must be valid UTF-8 (no invalid byte, no unpaired surrogate escape such as \\ud800)")
	}
	return tok, nil
}

// rawJSONTextValid reports whether the bytes of a JSON token as written
// (with the separators and white space before it) are valid UTF-8 and
// every \u escape of a surrogate is a high one followed by a low one. The
// token has been decoded, so its escapes are well formed.
func rawJSONTextValid(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if i >= len(b) || b[i] != 'u' || i+4 >= len(b) {
			continue
		}
		r := hex4(b[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate first
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			if lo := hex4(b[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads four hex digits; -1 if they are not.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// readBody reads the whole body under the limitBody bound: a larger one is
// 413, one that stalls 408, an unreadable one 400.
func readBody(c *gin.Context) ([]byte, error) {
	raw, err := io.ReadAll(c.Request.Body)
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return nil, errBodyTooLarge(mb.Limit)
	}
	var bt *httpserve.BodyTimeoutError
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
	dec := newTokens(raw)
	tok, err := dec.next("body")
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
		tok, err := dec.next("body")
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
	if _, err := dec.next("body"); err != nil { // the closing brace
		return syntaxError(err)
	}
	if _, err := dec.next("body"); err != io.EOF {
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
func decodeValue(dec *tokens, f *field) (bool, error) {
	tok, err := dec.next(f.name)
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
	case *bool:
		b, ok := tok.(bool)
		if !ok {
			return false, postings.FieldErrorf(f.name, "must be true or false")
		}
		*into = b
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
			tok, err := dec.next(f.name)
			if err != nil {
				return false, syntaxError(err)
			}
			s, ok := tok.(string)
			if !ok {
				return false, postings.FieldErrorf(f.name, "must be an array of strings")
			}
			items = append(items, s)
		}
		if _, err := dec.next(f.name); err != nil { // the closing bracket
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
func decodeStringMembers(dec *tokens, f *field) (stringMembers, error) {
	members := stringMembers{}
	seen := map[string]bool{}
	for dec.More() {
		if len(seen) == f.itemsMax {
			return nil, postings.FieldErrorf(f.name, "has more than %d members", f.itemsMax)
		}
		tok, err := dec.next(f.name)
		if err != nil {
			return nil, syntaxError(err)
		}
		name, _ := tok.(string)
		path := f.name + "." + quoteName(name)
		if seen[name] {
			return nil, postings.FieldErrorf(path, "appears more than once")
		}
		seen[name] = true
		if tok, err = dec.next(path); err != nil {
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
	if _, err := dec.next(f.name); err != nil { // the closing brace
		return nil, syntaxError(err)
	}
	return members, nil
}

func syntaxError(err error) error {
	var pe *postings.Error
	if errors.As(err, &pe) {
		return err // text that is not valid UTF-8, already named
	}
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

// checkCallbackURL checks a callback URL when it is given, with the rules
// and the allow list the callback sender applies before each attempt
// (callbackurl.Validate, docs/callbacks.md): a URL accepted here is one
// the sender may call, except for a host name that resolves to a refused
// address, which only the sender's dialer can see.
func checkCallbackURL(name, s string, allow callbackurl.AllowList) error {
	if err := callbackurl.Validate(s, allow); err != nil {
		var ue *callbackurl.Error
		if errors.As(err, &ue) {
			return postings.FieldErrorf(name, "%s", ue.Reason)
		}
		return postings.FieldErrorf(name, "is not a valid callback URL")
	}
	return nil
}
