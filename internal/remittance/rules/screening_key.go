package rules

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The key a name is screened on: its confusable skeleton (Unicode TR39),
// made case-insensitive, split into words, legal forms dropped.
//
// A TR39 skeleton is NFD, then each character replaced by the prototype of
// its confusables class (confusables.txt), then NFD again: "Асме" written
// with Cyrillic А, С, М, Е has the skeleton "ACME". The skeleton is case
// sensitive, though (Cyrillic "Т" → "T", but "т" stays "т"; "I" → "l" but
// "i" stays "i"), and screening must ignore case, so a name has two keys:
//
//   - the upper key: the skeleton of the name in upper case, then lower
//     case. It catches look-alike capitals (Cyrillic В Н К М Т, Greek Η Ν
//     Τ, "I" for "l", "0" for "O") and any mixture of cases, since the
//     name is put in capitals first.
//   - the lower key: the same from the name in lower case. It catches
//     look-alike small letters whose capitals do not look Latin (Greek ν
//     for v and η for n, Armenian օ ս հ ո, "rn" for "m").
//
// An entry is indexed under both of its keys; a screened name hits when
// either of its keys finds the entry under the same kind of key. Before the
// skeleton the name goes through NFKC, which folds full-width forms,
// mathematical letters (𝐀𝐂𝐌𝐄), superscripts (ᴵᵛᵃⁿ), ligatures, circled and
// other compatibility variants to plain letters, and then foldLetters,
// which drops the default-ignorable characters (the Hangul fillers among
// them: letters that show as nothing) and reads Latin small capitals
// (ɪᴠᴀɴ) and the modifier letters named after Latin letters as those
// letters. Then, character by character:
//
//   - a character of the confusables table (confusables_table.go, the
//     whole of UTS #39's, from tools/confusables) is replaced by its
//     prototype, whose characters are then read as below;
//   - combining marks (accents, once NFD has split them off) and invisible
//     characters (format characters and every default-ignorable code
//     point) are dropped: "Mu\u0308ller" is "Muller", "Ac\u200bme" is
//     "Acme";
//   - apostrophes and dots are dropped and do not separate words (O'Neil →
//     oneil, S.A. → sa; ʼ and ˈ are apostrophes by the table);
//   - letters and digits are lower-cased, with the Latin letters NFD cannot
//     split (ø, æ, ß, ł, đ, þ, œ) spelled in ASCII;
//   - anything else (spaces, punctuation, symbols, and the modifier
//     letters no table folds, such as ˌ) separates words.
//
// Trailing legal-form words (ltd, llc, gmbh, co, inc, …) are then dropped,
// compared by their own keys.

// keyCase selects one of the two keys of a name.
type keyCase int

const (
	keyUpper keyCase = iota
	keyLower
	keyCases // the number of keys
)

// screenKey returns the words of a name's key of case c, legal forms
// dropped; nil for a name without letters or digits.
func screenKey(name string, c keyCase) []string {
	words := skeletonWords(name, c)
	for len(words) > 1 && legalFormKeys[c][words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	return words
}

// skeletonWords is screenKey before the legal forms are dropped.
func skeletonWords(name string, c keyCase) []string {
	s := foldLetters(norm.NFKC.String(name))
	if c == keyUpper {
		s = strings.ToUpper(s)
	} else {
		s = strings.ToLower(s)
	}
	s = norm.NFD.String(s)
	var k keyBuilder
	for _, r := range s {
		if r < utf8.RuneSelf {
			// What follows, precomputed: most listed names are ASCII.
			if a := &asciiKeys[r]; a.sep {
				k.flush()
			} else {
				k.b.WriteString(a.s)
			}
			continue
		}
		if p, ok := confusablePrototype[r]; ok {
			// The prototype's characters are read like the name's: its
			// letters kept (small), its apostrophes deleted, anything
			// else a word break.
			for _, q := range p {
				k.add(q)
			}
			continue
		}
		k.add(r)
	}
	return k.done()
}

// asciiKeys is what skeletonWords does with each ASCII character, taken
// from the general path once: the letters it appends to the word (its
// prototype's, small), or that it separates words.
var asciiKeys = func() (t [utf8.RuneSelf]struct {
	s   string
	sep bool
}) {
	for r := range rune(utf8.RuneSelf) {
		var k keyBuilder
		k.b.WriteByte('x') // a word in progress, to see whether r ends it
		if p, ok := confusablePrototype[r]; ok {
			for _, q := range p {
				k.add(q)
			}
		} else {
			k.add(r)
		}
		switch {
		case len(k.words) > 0 && (len(k.words) > 1 || k.b.Len() > 0):
			panic("rules: an ASCII character's prototype both separates and adds letters")
		case len(k.words) > 0:
			t[r].sep = true
		default:
			t[r].s = k.b.String()[1:]
		}
	}
	return t
}()

// foldLetters drops the default-ignorable characters and reads the Latin
// small capitals and the modifier letters named after Latin letters as
// those letters (letterFolds, name_classes_table.go). It runs before case
// mapping, which would otherwise turn "ɪ" into "Ɪ" (U+A7AE), and before
// the confusables table, which reads small capital M as turned w.
func foldLetters(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch f, ok := letterFolds[r]; {
		case ok:
			b.WriteString(f)
		case unicode.Is(defaultIgnorable, r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// keyBuilder splits a skeleton into the words of a key.
type keyBuilder struct {
	words []string
	b     strings.Builder
}

// add reads one character of the skeleton: small capitals as their
// letters (letterFolds), marks, invisible characters,
// apostrophes and dots are dropped; letters (but modifier letters) and
// digits are kept, small, with the Latin letters NFD cannot split spelled
// in ASCII; anything else, modifier letters no table folds (ˌ ˈ ˑ ー ـ)
// among them, ends a word. A modifier letter that is left is a mark of
// length, stress, tone or repetition, and looks like the punctuation it
// sits among, so it separates as punctuation does rather than gluing two
// words into one that matches neither.
func (k *keyBuilder) add(r rune) {
	if f, ok := letterFolds[r]; ok {
		// A prototype may be a small capital (Cyrillic т is ᴛ).
		k.b.WriteString(f)
		return
	}
	switch {
	case invisibleInName(r), deletedInName(r):
	case unicode.IsDigit(r) || (unicode.IsLetter(r) && !unicode.Is(unicode.Lm, r)):
		r = unicode.ToLower(r)
		if f, ok := latinFolds[r]; ok {
			k.b.WriteString(f)
		} else {
			k.b.WriteRune(r)
		}
	default:
		k.flush()
	}
}

func (k *keyBuilder) flush() {
	if k.b.Len() > 0 {
		k.words = append(k.words, k.b.String())
		k.b.Reset()
	}
}

// done returns the words.
func (k *keyBuilder) done() []string {
	k.flush()
	return k.words
}

// invisibleInName reports a character that changes nothing a reader sees:
// combining marks, format characters (Cf: zero-width space and joiners,
// soft hyphen, bidi controls, the byte order mark) and every other
// default-ignorable code point (the Hangul fillers, variation selectors,
// the combining grapheme joiner, tag characters).
func invisibleInName(r rune) bool {
	return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(defaultIgnorable, r)
}

// alnumPrototype holds the characters of confusablePrototype whose
// prototype has a letter or digit: they belong to a word even when they
// are not letters themselves (¢ is c), unlike those that read as
// punctuation (‐ is -).
var alnumPrototype = func() map[rune]bool {
	m := map[rune]bool{}
	for r, p := range confusablePrototype {
		if strings.IndexFunc(p, func(q rune) bool { return unicode.IsLetter(q) || unicode.IsDigit(q) }) >= 0 {
			m[r] = true
		}
	}
	return m
}()

// deletedInName reports the punctuation dropped without separating words.
func deletedInName(r rune) bool {
	switch r {
	case '\'', '’', '‘', '`', '´', '.':
		return true
	}
	return false
}

// legalForms are the legal-form words dropped from the end of a name,
// written in ASCII as a reader would ("S.A." is "sa": dots are deleted).
var legalForms = []string{
	"ltd", "limited", "llc", "llp", "lp", "inc", "incorporated", "corp",
	"corporation", "co", "company", "plc", "gmbh", "ag", "kg", "mbh", "sa",
	"sas", "sarl", "srl", "spa", "bv", "nv", "oy", "ab", "as", "asa", "aps",
	"pte", "pty", "jsc", "ojsc", "pjsc", "cjsc", "ooo", "zao", "oao", "fze",
	"fzco", "fzc", "bhd", "sdn", "kk",
}

// legalFormKeys are the legal forms as each key spells them ("limited" is
// "llmlted" in the upper key, "lirnited" in the lower one).
var legalFormKeys = func() [keyCases]map[string]bool {
	var out [keyCases]map[string]bool
	for c := keyUpper; c < keyCases; c++ {
		out[c] = map[string]bool{}
		for _, f := range legalForms {
			out[c][strings.Join(skeletonWords(f, c), " ")] = true
		}
	}
	return out
}()

// latinFolds spells in ASCII the Latin letters (lower case) that NFD does
// not split into a base letter and an accent; the others lose their accent
// as a combining mark. (Most of these are in the confusables table too.)
var latinFolds = map[rune]string{
	'æ': "ae", 'đ': "d", 'ð': "d", 'ħ': "h", 'ı': "i", 'ł': "l", 'ŀ': "l",
	'ø': "o", 'œ': "oe", 'ß': "ss", 'ŧ': "t", 'þ': "th",
}

// Mixed scripts. A word whose letters come from more than one script, such
// as "Аcme" with a Cyrillic А, is how a look-alike is usually slipped into
// a Latin name; no real name is spelled that way. The combinations TR39's
// "highly restrictive" level allows are not mixed: Latin with Han,
// Hiragana and Katakana (Japanese), with Han and Bopomofo, or with Han and
// Hangul (Korean). Common characters (digits, punctuation) and combining
// marks belong to no script here. Words are split as for the key.

// highlyRestrictive are the script sets TR39 allows within one identifier.
var highlyRestrictive = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// mixedScriptWord returns the first word of name mixing scripts, and those
// scripts sorted; "" when every word is of one script.
func mixedScriptWord(name string) (string, []string) {
	s := norm.NFKC.String(name)
	start := -1
	scripts := map[string]bool{}
	check := func(end int) (string, []string) {
		if start >= 0 && mixedScripts(scripts) {
			list := make([]string, 0, len(scripts))
			for sc := range scripts {
				list = append(list, sc)
			}
			sort.Strings(list)
			return s[start:end], list
		}
		start = -1
		clear(scripts)
		return "", nil
	}
	for i, r := range s {
		_, folded := letterFolds[r]
		if invisibleInName(r) || deletedInName(r) || alnumPrototype[r] || folded || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			if sc := scriptOf(r); sc != "" {
				scripts[sc] = true
			}
			continue
		}
		if w, list := check(i); w != "" {
			return w, list
		}
	}
	return check(len(s))
}

// mixedScripts reports a set of scripts one word may not mix.
func mixedScripts(set map[string]bool) bool {
	if len(set) < 2 {
		return false
	}
	for _, allowed := range highlyRestrictive {
		n := 0
		for _, sc := range allowed {
			if set[sc] {
				n++
			}
		}
		if n == len(set) {
			return false
		}
	}
	return true
}

// commonScripts are tried first by scriptOf, in this order.
var commonScripts = []string{"Latin", "Cyrillic", "Greek", "Armenian", "Han", "Hiragana", "Katakana",
	"Hangul", "Arabic", "Hebrew", "Georgian", "Cherokee", "Devanagari", "Thai", "Bopomofo"}

// allScripts are the names of unicode.Scripts, sorted for a stable answer.
var allScripts = func() []string {
	names := make([]string, 0, len(unicode.Scripts))
	for name := range unicode.Scripts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}()

// scriptOf returns the Unicode script of a letter, or "" for a character
// of no particular script (Common, Inherited) or that is not a letter.
func scriptOf(r rune) string {
	if !unicode.IsLetter(r) || unicode.Is(defaultIgnorable, r) {
		return ""
	}
	for _, name := range commonScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for _, name := range allScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			if name == "Common" || name == "Inherited" {
				return ""
			}
			return name
		}
	}
	return ""
}
