package postings

import (
	"unicode"
	"unicode/utf8"
)

// Free text: what a merchant, an operator or a card network writes for
// people to read — a card's remark, a freeze reason, a merchant's name, a
// beneficiary's name, a card acceptor's name. It is stored, shown in
// answers, bills, callbacks, logs and terminals, so it must not carry what
// changes how the text around it is read. CheckText is the one check of
// every free-text field, API and CLI alike (docs/api.md, "Free text").

// CheckText checks free text for field: valid UTF-8, at most charsMax
// characters (Unicode code points), and none of the characters textRefusal
// names. The error is EINVALID naming field, and names the first refused
// character by its code point (never the character itself, which could
// reorder or hide the message around it).
func CheckText(field, s string, charsMax int) error {
	if !utf8.ValidString(s) {
		return FieldErrorf(field, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > charsMax {
		return FieldErrorf(field, "is longer than %d characters", charsMax)
	}
	for i, r := range s {
		if what := textRefusal(r); what != "" {
			return FieldErrorf(field, "must not contain %s (U+%04X at character %d)", what,
				r, utf8.RuneCountInString(s[:i])+1)
		}
	}
	return nil
}

// Characters allowed although they are format characters (Cf): the zero
// width non-joiner and joiner, which Persian, Indic scripts and emoji
// sequences need.
const (
	zeroWidthNonJoiner = '\u200C'
	zeroWidthJoiner    = '\u200D'
)

// textRefusal says why r may not appear in free text, or "" when it may.
// Refused:
//
//   - C0 controls U+0000–U+001F (tab and line breaks included: every
//     free-text field is one line), DEL U+007F and the C1 controls
//     U+0080–U+009F: terminal escapes, NUL (which PostgreSQL text cannot
//     hold), log and CSV line breaks;
//   - the bidirectional formatting characters: U+061C, U+200E, U+200F,
//     U+202A–U+202E (embeddings and overrides), U+2066–U+2069 (isolates);
//     they reorder what is displayed after them ("Trojan Source");
//   - every other format character (Unicode category Cf: U+00AD, U+200B,
//     U+2060–U+2064, U+FEFF, U+FFF9–U+FFFB, …) except U+200C and U+200D,
//     and the whole tags block U+E0000–U+E007F: invisible, they make two
//     texts that look the same differ, or hide text from a reader;
//   - the line and paragraph separators U+2028, U+2029;
//   - U+FFFD, the replacement character: the mark of text already damaged
//     (invalid UTF-8 replaced on the way), and the noncharacters
//     U+FDD0–U+FDEF and U+xFFFE, U+xFFFF of every plane.
//
// Everything else is accepted: letters of every script, marks, digits,
// punctuation, symbols and emoji, spaces of any width, private-use and
// yet-unassigned code points.
func textRefusal(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return "control characters"
	case r == '\u061C' || r == '\u200E' || r == '\u200F' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069'):
		return "bidirectional formatting characters"
	case r == zeroWidthNonJoiner || r == zeroWidthJoiner:
		return ""
	case unicode.Is(unicode.Cf, r) || (r >= 0xE0000 && r <= 0xE007F):
		return "invisible format characters"
	case r == '\u2028' || r == '\u2029':
		return "line or paragraph separators"
	case r == utf8.RuneError:
		return "the replacement character"
	case (r >= '\uFDD0' && r <= '\uFDEF') || r&0xFFFE == 0xFFFE:
		return "noncharacters"
	}
	return ""
}

// TextRuneAllowed reports whether CheckText accepts r.
func TextRuneAllowed(r rune) bool { return utf8.ValidRune(r) && textRefusal(r) == "" }
