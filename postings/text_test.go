package postings

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheckText(t *testing.T) {
	for _, tt := range []struct {
		give string
		max  int
		want string // the message; "" = accepted
	}{
		{"", 10, ""},
		{"lost at the airport", 255, ""},
		{"Müller & Söhne — Café №1", 255, ""},
		{"北京商店", 4, ""},
		{"Ελληνικά кириллица עברית العربية हिन्दी", 255, ""},
		{"👩\u200D💻 team", 255, ""},          // ZWJ emoji sequence
		{"می\u200Cخواهم", 255, ""},          // ZWNJ in Persian
		{"a\u00A0b\u3000c\u2003d", 255, ""}, // spaces of other widths
		{"\U000F0000 private use", 255, ""},
		{"🇩🇪", 2, ""},
		{strings.Repeat("é", 255), 255, ""},
		{strings.Repeat("é", 256), 255, "remark: is longer than 255 characters"},
		{strings.Repeat("💳", 256), 255, "remark: is longer than 255 characters"},
		{strings.Repeat("a", 2), 1, "remark: is longer than 1 characters"},

		{"a\x00b", 255, "remark: must not contain control characters (U+0000 at character 2)"},
		{"a\tb", 255, "remark: must not contain control characters (U+0009 at character 2)"},
		{"line\nbreak", 255, "remark: must not contain control characters (U+000A at character 5)"},
		{"cr\r", 255, "remark: must not contain control characters (U+000D at character 3)"},
		{"\x1b[31mred", 255, "remark: must not contain control characters (U+001B at character 1)"},
		{"del\x7f", 255, "remark: must not contain control characters (U+007F at character 4)"},
		{"c1\u0085", 255, "remark: must not contain control characters (U+0085 at character 3)"},
		{"c1\u009b31m", 255, "remark: must not contain control characters (U+009B at character 3)"},
		{"é\u0080", 255, "remark: must not contain control characters (U+0080 at character 2)"},
		{"\u202Egnp.exe", 255, "remark: must not contain bidirectional formatting characters (U+202E at character 1)"},
		{"x\u202A", 255, "remark: must not contain bidirectional formatting characters (U+202A at character 2)"},
		{"x\u202B", 255, "remark: must not contain bidirectional formatting characters (U+202B at character 2)"},
		{"x\u202C", 255, "remark: must not contain bidirectional formatting characters (U+202C at character 2)"},
		{"x\u202D", 255, "remark: must not contain bidirectional formatting characters (U+202D at character 2)"},
		{"x\u2066", 255, "remark: must not contain bidirectional formatting characters (U+2066 at character 2)"},
		{"x\u2067", 255, "remark: must not contain bidirectional formatting characters (U+2067 at character 2)"},
		{"x\u2068", 255, "remark: must not contain bidirectional formatting characters (U+2068 at character 2)"},
		{"x\u2069", 255, "remark: must not contain bidirectional formatting characters (U+2069 at character 2)"},
		{"x\u200E", 255, "remark: must not contain bidirectional formatting characters (U+200E at character 2)"},
		{"x\u200F", 255, "remark: must not contain bidirectional formatting characters (U+200F at character 2)"},
		{"x\u061C", 255, "remark: must not contain bidirectional formatting characters (U+061C at character 2)"},
		{"zero\u200Bwidth", 255, "remark: must not contain invisible format characters (U+200B at character 5)"},
		{"\uFEFFbom", 255, "remark: must not contain invisible format characters (U+FEFF at character 1)"},
		{"soft\u00ADhyphen", 255, "remark: must not contain invisible format characters (U+00AD at character 5)"},
		{"word\u2060joiner", 255, "remark: must not contain invisible format characters (U+2060 at character 5)"},
		{"tag\U000E0041", 255, "remark: must not contain invisible format characters (U+E0041 at character 4)"},
		{"a\u2028b", 255, "remark: must not contain line or paragraph separators (U+2028 at character 2)"},
		{"a\u2029b", 255, "remark: must not contain line or paragraph separators (U+2029 at character 2)"},
		{"broken \uFFFD", 255, "remark: must not contain the replacement character (U+FFFD at character 8)"},
		{"x\uFFFE", 255, "remark: must not contain noncharacters (U+FFFE at character 2)"},
		{"x\uFDD0", 255, "remark: must not contain noncharacters (U+FDD0 at character 2)"},
		{"x\U0010FFFF", 255, "remark: must not contain noncharacters (U+10FFFF at character 2)"},
		{"bad \xff", 255, "remark: must be valid UTF-8"},
		{"bad \xc3\x28", 255, "remark: must be valid UTF-8"},
		{"surrogate \xed\xa0\x80", 255, "remark: must be valid UTF-8"},
		{"overlong \xc0\xaf", 255, "remark: must be valid UTF-8"},
		{"truncated \xe2\x82", 255, "remark: must be valid UTF-8"},
	} {
		err := CheckText("remark", tt.give, tt.max)
		got := ""
		if err != nil {
			e := AsError(err)
			if e.Code != EINVALID || e.Field != "remark" {
				t.Errorf("%q: %#v, want EINVALID naming remark", tt.give, e)
			}
			got = e.Field + ": " + e.Message
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.give, got, tt.want)
		}
	}
}

// Every code point of the classes the docs list is refused, and the
// letters, digits and symbols of the other planes are not.
func TestTextRuneClasses(t *testing.T) {
	refused := func(lo, hi rune) {
		for r := lo; r <= hi; r++ {
			if TextRuneAllowed(r) {
				t.Errorf("U+%04X accepted", r)
			}
		}
	}
	refused(0x00, 0x1F)
	refused(0x7F, 0x9F)
	refused(0x202A, 0x202E)
	refused(0x2066, 0x2069)
	refused(0x200E, 0x200F)
	refused(0xFDD0, 0xFDEF)
	refused(0xE0000, 0xE007F)
	for plane := rune(0); plane <= 0x10; plane++ {
		refused(plane<<16|0xFFFE, plane<<16|0xFFFF)
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if unicode.IsControl(r) && TextRuneAllowed(r) {
			t.Errorf("control U+%04X accepted", r)
		}
		if (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) && !TextRuneAllowed(r) && !unicode.Is(unicode.Cf, r) {
			t.Errorf("U+%04X (a letter, digit or mark) refused", r)
		}
	}
	if TextRuneAllowed(0xD800) || TextRuneAllowed(-1) || TextRuneAllowed(unicode.MaxRune+1) {
		t.Error("a surrogate or a value outside Unicode accepted")
	}
}

// FuzzCheckText: what CheckText accepts is valid UTF-8 within the bound,
// with no C0/C1 control, bidi, format (but ZWNJ/ZWJ), separator,
// replacement or noncharacter; what it refuses is EINVALID naming the
// field.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"", "lost", "a\x00b", "\u202Eexe", "\xff", "👩\u200D💻", "\uFFFD", "\u0085", strings.Repeat("é", 40)} {
		f.Add(s, 32)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1000 {
			return
		}
		err := CheckText("f", s, max)
		if err != nil {
			if e := AsError(err); e.Code != EINVALID || e.Field != "f" || !utf8.ValidString(e.Message) {
				t.Fatalf("%q: %#v", s, e)
			}
			return
		}
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
			t.Fatalf("accepted %q (max %d)", s, max)
		}
		for _, r := range s {
			bidi := r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
			if unicode.IsControl(r) || bidi || r == utf8.RuneError || r == 0x2028 || r == 0x2029 ||
				(unicode.Is(unicode.Cf, r) && r != 0x200C && r != 0x200D) {
				t.Fatalf("accepted %q with U+%04X", s, r)
			}
		}
	})
}
