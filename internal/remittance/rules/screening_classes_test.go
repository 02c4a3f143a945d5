package rules

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/paygate/gateway/postings"
)

// Issue 27, point 1: invisible letters, small capitals and modifier letters
// hid a listed name from screening. Each variant below must hit the very
// entry it disguises.

const classesSanctions = `name,country,list,id
Ivan Petrov,,TEST,1
ACME TRADING,,TEST,2
`

func TestScreenInvisibleAndFoldedVariants(t *testing.T) {
	l := mustParse(t, classesSanctions)
	tests := []struct{ desc, name, entry string }{
		// The examples: Hangul fillers, letters that show as nothing.
		{"hangul filler between words", "Ivan\u3164Petrov", "TEST:1"},
		{"choseong filler in a word", "Iv\u115Fan Petrov", "TEST:1"},
		{"halfwidth filler at the end", "Ivan Petrov\uFFA0", "TEST:1"},
		{"jungseong filler in a word", "Iv\u1160an Petrov", "TEST:1"},
		// Other default-ignorable code points of the same class.
		{"combining grapheme joiner", "Iv\u034Fan Petrov", "TEST:1"},
		{"khmer inherent vowel", "Ivan Pe\u17B4trov", "TEST:1"},
		{"mongolian variation selector", "Iva\u180Bn Petrov", "TEST:1"},
		{"variation selector 16", "Ivan\uFE0F Petrov", "TEST:1"},
		{"variation selector 17", "Ivan Petr\U000E0100ov", "TEST:1"},
		{"tag letter", "Ivan\U000E0041Petrov", "TEST:1"},
		{"zero width joiner", "Iv\u200Dan Petrov", "TEST:1"},
		{"zero width non-joiner", "Ivan Pe\u200Ctrov", "TEST:1"},
		{"word joiner", "Ivan\u2060Petrov", "TEST:1"},
		{"soft hyphen", "Iv\u00ADan Petrov", "TEST:1"},
		{"shorthand format control", "Ivan Petro\U0001BCA0v", "TEST:1"},
		{"reserved default-ignorable", "Iva\uFFF0n Petrov", "TEST:1"},
		// Latin small capitals, as the and others of the class.
		{"small capitals", "ɪᴠᴀɴ ᴘᴇᴛʀᴏᴠ", "TEST:1"},
		{"small capitals mixed with plain", "Iᴠan ᴘetrov", "TEST:1"},
		{"capital small capital I", "\uA7AEvan Petrov", "TEST:1"},
		{"small capitals, company", "ᴀᴄᴍᴇ ᴛʀᴀᴅɪɴɢ", "TEST:2"},
		{"capital small capital I, all small capitals", "\uA7AEᴠᴀɴ ᴘᴇᴛʀᴏᴠ", "TEST:1"},
		{"small capitals and a filler", "ɪᴠᴀɴ\u3164ᴘᴇᴛʀᴏᴠ", "TEST:1"},
		// Modifier letters: separators unless a table reads them as letters.
		{"low vertical line as separator", "Ivan\u02CCPetrov", "TEST:1"},
		{"low vertical line in a word", "Iv\u02CCan Petrov", "TEST:1"},
		{"vertical line (an apostrophe)", "Ivan\u02C8Petrov", "TEST:1"},
		{"modifier apostrophe", "Iva\u02BCn Petrov", "TEST:1"},
		{"triangular colon", "Ivan\u02D0Petrov", "TEST:1"},
		{"half triangular colon", "Ivan\u02D1Petrov", "TEST:1"},
		{"tone letter", "Ivan\u02E5Petrov", "TEST:1"},
		{"prolonged sound mark", "Ivan\u30FCPetrov", "TEST:1"},
		{"modifier small capital AA", "ACME TR\U00010780DING", ""}, // folds to "aa": a different word
		// Superscripts and subscripts (NFKC).
		{"superscripts", "ᴵᵛᵃⁿ ᴾᵉᵗʳᵒᵛ", "TEST:1"},
		{"superscript letters in a word", "Iᵛan Petrov", "TEST:1"},
		{"subscripts", "Ivan Pₑtrₒv", "TEST:1"},
	}
	for _, tt := range tests {
		hit, entry := l.Screen(tt.name, "RU")
		if hit != (tt.entry != "") || !strings.Contains(entry, tt.entry) {
			t.Errorf("%s: Screen(%+q) = %v %q, want entry %q", tt.desc, tt.name, hit, entry, tt.entry)
		}
	}
}

// TestScreenEveryDefaultIgnorable slips every default-ignorable code point
// of the table (assigned or reserved) into a listed name, inside a word and
// between words: the key never changes, and the validator refuses it.
func TestScreenEveryDefaultIgnorable(t *testing.T) {
	l := mustParse(t, classesSanctions)
	n := 0
	each := func(r rune) {
		n++
		for _, v := range []string{"Iv" + string(r) + "an Petrov", "Ivan" + string(r) + "Petrov"} {
			if hit, entry := l.Screen(v, "RU"); !hit || !strings.Contains(entry, "TEST:1") {
				t.Errorf("U+%04X: Screen(%+q) = %v %q", r, v, hit, entry)
			}
			// Bidi controls are refused by the text rules first, with
			// their own message; every other one as invisible.
			if err := validateBeneficiaryName(v); err == nil {
				t.Errorf("U+%04X: validateBeneficiaryName(%+q) = %v", r, v, err)
			}
		}
	}
	for _, x := range defaultIgnorable.R16 {
		for r := rune(x.Lo); r <= rune(x.Hi); r++ {
			each(r)
		}
	}
	for _, x := range defaultIgnorable.R32 {
		for r := rune(x.Lo); r <= rune(x.Hi); r++ {
			each(r)
		}
	}
	if n < 4000 {
		t.Fatalf("only %d default-ignorable code points tried", n)
	}
}

// TestScreenEveryLetterFold: each small capital or modifier letter the
// tables fold reads as its letters, in both keys.
func TestScreenEveryLetterFold(t *testing.T) {
	for r, f := range letterFolds {
		for c := keyUpper; c < keyCases; c++ {
			got := strings.Join(screenKey("x"+string(r)+"x", c), " ")
			want := strings.Join(screenKey("x"+f+"x", c), " ")
			if got != want {
				t.Errorf("U+%04X key %d: %q, want %q as %q", r, c, got, want, f)
			}
		}
	}
	if len(letterFolds) < 30 {
		t.Fatalf("only %d letter folds", len(letterFolds))
	}
}

// TestScreenEveryModifierLetterSeparates: a modifier letter that neither
// NFKC, the letter folds nor the confusables table reads as a letter
// separates words; it never glues "Ivan" and "Petrov" into a third word.
func TestScreenEveryModifierLetterSeparates(t *testing.T) {
	l := mustParse(t, classesSanctions)
	n := 0
	for _, x := range unicode.Lm.R16 {
		for r := rune(x.Lo); r <= rune(x.Hi); r += rune(x.Stride) {
			if norm.NFKC.String(string(r)) != string(r) || alnumPrototype[r] || letterFolds[r] != "" {
				continue
			}
			n++
			v := "Ivan" + string(r) + "Petrov"
			if hit, entry := l.Screen(v, "RU"); !hit || !strings.Contains(entry, "TEST:1") {
				t.Errorf("U+%04X: Screen(%+q) = %v %q", r, v, hit, entry)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d modifier letters tried", n)
	}
}

// TestScreenConfusablePrototypes: every character of the confusables table
// has the key of its prototype (lower key, for the characters lower case
// leaves alone: the upper key puts a name in capitals first).
func TestScreenConfusablePrototypes(t *testing.T) {
	n := 0
	for r, p := range confusablePrototype {
		if unicode.ToLower(r) != r || strings.ToLower(p) != p || letterFolds[r] != "" {
			continue // small capitals are read as their letters first
		}
		n++
		got := strings.Join(screenKey("x"+string(r)+"x", keyLower), " ")
		want := strings.Join(screenKey("x"+p+"x", keyLower), " ")
		if got != want {
			t.Errorf("U+%04X %q: key %q, want %q (prototype %q)", r, string(r), got, want, p)
		}
	}
	if n < 1000 {
		t.Fatalf("only %d confusables tried", n)
	}
}

// TestScreenOrdinaryNames: names in many scripts, none of them a listed
// name or a disguise of one, pass the validator and do not hit; a list of
// them finds each one exactly.
func TestScreenOrdinaryNames(t *testing.T) {
	names := []string{
		"Ivana Petrović", "Ivan Petrovsky", "Иван Петров", "Γιάννης Παπαδόπουλος", "佐藤太郎", "佐々木 健",
		"김민준", "محمد علي", "דוד כהן", "Nguyễn Văn An", "Łukasz Żółć", "Søren Kierkegaard",
		"José Núñez", "Chloë O'Neil", "राम शर्मा", "สมชาย ใจดี", "Ἀλέξανδρος", "Ṭhākur Singh",
		"ქეთევან ბერიძე", "Արամ Խաչատրյան", "トーマス・エジソン", "Acme Трейдинг", "Kʻanakʻaʻi Oʻahu",
		"Acme\u2010Холдинг", // a hyphen look-alike separates, it does not join two alphabets into one word
	}
	l := mustParse(t, classesSanctions)
	var list strings.Builder
	list.WriteString("name,country\n")
	for _, n := range names {
		if err := validateBeneficiaryName(n); err != nil {
			t.Errorf("validateBeneficiaryName(%q) = %v", n, err)
		}
		if hit, entry := l.Screen(n, "DE"); hit {
			t.Errorf("Screen(%q) = hit %q", n, entry)
		}
		list.WriteString("\"" + n + "\",\n")
	}
	own := mustParse(t, list.String())
	for i, n := range names {
		if hit, entry := own.Screen(n, "DE"); !hit || entry != own.Entries()[i].String() {
			t.Errorf("own list: Screen(%q) = %v %q", n, hit, entry)
		}
	}
}

// TestRefuseInvisibleNames: the door refuses a default-ignorable in a
// beneficiary name (400 naming the field) and in a sanctions list's name
// (naming the line).
func TestRefuseInvisibleNames(t *testing.T) {
	for _, name := range []string{"Ivan\u3164Petrov", "Iv\u115Fan Petrov", "Ivan Petrov\uFFA0", "Iv\u1160an Petrov",
		"Ivan\u034FPetrov", "Ivan\uFE0F", "Ivan\U000E0041", "Iv\u180Ban"} {
		r := validRemittances()["DE EUR IBAN only"]
		r.Beneficiary.Name = name
		_, err := ValidateRemittance(&r)
		e := postings.AsError(err)
		if err == nil || e.Field != "beneficiary.name" || !strings.Contains(e.Message, "invisible") {
			t.Errorf("ValidateRemittance(name %+q) = %v, want a refusal on beneficiary.name", name, err)
		}
		_, err = ParseSanctionsList(strings.NewReader("name,country\nACME,IR\n\"" + name + "\",\n"))
		e = postings.AsError(err)
		if err == nil || e.Field != "sanctions_list" || !strings.Contains(e.Message, "line 3") || !strings.Contains(e.Message, "invisible") {
			t.Errorf("ParseSanctionsList(%+q) = %v, want a refusal naming line 3", name, err)
		}
	}
}

// FuzzInvisibleNames: a default-ignorable slipped anywhere into any name
// never changes its keys, and a name the validator accepts holds none.
func FuzzInvisibleNames(f *testing.F) {
	for _, s := range []string{"Ivan Petrov", "ɪᴠᴀɴ ᴘᴇᴛʀᴏᴠ", "Ivan\u3164Petrov", "Acme\u02CCTrading", "김민준", "ᴵᵛᵃⁿ"} {
		f.Add(s, uint(3), uint(0))
	}
	var ignorables []rune
	for _, x := range defaultIgnorable.R16 {
		for r := rune(x.Lo); r <= rune(x.Hi); r++ {
			ignorables = append(ignorables, r)
		}
	}
	for _, x := range defaultIgnorable.R32 {
		ignorables = append(ignorables, rune(x.Lo), rune(x.Hi))
	}
	f.Fuzz(func(t *testing.T, name string, at, which uint) {
		if validateBeneficiaryName(name) == nil {
			if r, found := invisibleInText(name); found {
				t.Fatalf("validator accepted %+q with U+%04X", name, r)
			}
		}
		runes := []rune(name)
		i := int(at % uint(len(runes)+1))
		r := ignorables[which%uint(len(ignorables))]
		with := string(runes[:i]) + string(r) + string(runes[i:])
		for c := keyUpper; c < keyCases; c++ {
			a, b := strings.Join(screenKey(name, c), " "), strings.Join(screenKey(with, c), " ")
			if a != b {
				t.Fatalf("U+%04X at %d changed key %d of %+q: %q → %q", r, i, c, name, a, b)
			}
		}
		if validateBeneficiaryName(with) == nil {
			t.Fatalf("validator accepted %+q", with)
		}
	})
}
