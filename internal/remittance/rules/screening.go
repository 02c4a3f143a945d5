package rules

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sanctions screening of remittance beneficiaries: a pure matcher over a list
// the operator loads (the CLI reads the file and hands ParseSanctionsList or
// ReadSanctionsList a reader, sanctions_read.go; nothing here touches the
// file system). The list's index is sanctions_index.go.
//
// Matching. A name is reduced to its key (screening_key.go): NFKC, then a
// confusable skeleton (Unicode TR39: look-alike letters of other alphabets,
// mathematical and full-width forms read as the Latin letters they imitate),
// case, accents, apostrophes, dots and invisible characters ignored, every
// other punctuation or white-space run one word break, trailing legal-form
// words dropped (ltd, llc, gmbh, co, inc, …). A name has two keys, one read
// in capitals and one in small letters, because look-alikes differ by case
// (Cyrillic "Т" looks like "T", its "т" does not). A screened name hits an
// entry when, for either key, any of these agree:
//
//  1. the keys are equal ("ACME Trading Co., Ltd." = "Acme Trading" =
//     "АСМЕ Тrading" with Cyrillic letters);
//  2. the sets of their words are equal, order ignored ("Ivanov Petr" =
//     "Petr Ivanov"; repeated words count once);
//  3. the keys are equal with all spaces removed ("Al-Qaida" = "Alqaida").
//
// and the countries agree: an entry with a country hits only a beneficiary
// of that country (or one whose country is unknown, ""); an entry without a
// country hits every country.
//
// A name that matches no entry but has a word mixing scripts ("Аcme" with
// a Cyrillic А; mixedScriptWord) is a hit too, reported as such instead of
// an entry: a look-alike letter in a Latin word is how a listed name is
// disguised, and no real name is spelled that way. The remittance is
// REJECTED like any other hit, for the operator to review; the merchant may
// send it again with the name spelled in one alphabet.
//
// Trade-offs, stated plainly. Screening prefers false positives (a REJECTED
// remittance the operator reviews) to false negatives (a sanctioned payee
// paid), but this matcher is deliberately exact after normalisation:
//
//   - False negatives: no fuzzy matching, so a misspelling, a
//     transliteration variant (Mohammed / Muhammad, Qaddafi / Gaddafi), a
//     missing or extra word (a middle name, "Trading"), an abbreviation
//     ("Intl" / "International") or a name in another script than the
//     list's (Иванов for Ivanov: a transliteration, not a look-alike) all
//     escape it. Load the list's aliases (AKA) as rows of their own: that
//     is how the published lists (OFAC SDN, EU, UN, UK) carry these
//     variants. A country-scoped entry misses the same party banking in
//     another country; leave the country empty for entities that move.
//   - False positives: rules 2 and 3 match names that differ in word order
//     or spacing only, which is rare for distinct parties but happens for
//     common personal names; dropping legal forms makes "X Ltd" and "X Inc"
//     the same name; the skeleton makes names that merely look alike the
//     same ("I", "l" and "1"; "O" and "0"; "rn" and "m"), and a name that
//     mixes scripts in one word always hits. All are accepted for recall.

// SanctionsEntry is one row of a sanctions list.
type SanctionsEntry struct {
	Name    string // as listed
	Country string // ISO 3166-1 alpha-2, or "" for any country
	List    string // source list, e.g. "OFAC-SDN" (optional)
	ID      string // identifier within the list (optional)
}

// String renders the entry for an operator: "OFAC-SDN:12345 ACME TRADING LTD (IR)".
func (e SanctionsEntry) String() string {
	var b strings.Builder
	if e.List != "" || e.ID != "" {
		b.WriteString(e.List)
		if e.ID != "" {
			if e.List != "" {
				b.WriteByte(':')
			}
			b.WriteString(e.ID)
		}
		b.WriteByte(' ')
	}
	b.WriteString(e.Name)
	if e.Country != "" {
		b.WriteString(" (" + e.Country + ")")
	}
	return b.String()
}

// SanctionsList is a parsed sanctions list, indexed for Screen. It is
// immutable once built, so one list may be screened from many goroutines.
type SanctionsList struct {
	entries []SanctionsEntry
	index   keyIndex
}

// Entries returns the entries in list order (a copy).
func (l *SanctionsList) Entries() []SanctionsEntry {
	if l == nil {
		return nil
	}
	return append([]SanctionsEntry(nil), l.entries...)
}

// Len returns the number of entries.
func (l *SanctionsList) Len() int {
	if l == nil {
		return 0
	}
	return len(l.entries)
}

// Screen reports whether a beneficiary called name in country matches an
// entry of the list, and that entry (SanctionsEntry.String) when it does:
// the first in list order of those that match. A name matching no entry
// but mixing scripts in one word is a hit as well, reported as "mixed
// scripts in one word (Cyrillic, Latin): "Аcme"". An empty or nil list
// never hits: whether to pay without a list loaded is the caller's
// decision, not the matcher's. A name longer than any listed one is still
// screened (on its first sanctionsNameRunesMax characters).
func (l *SanctionsList) Screen(name, country string) (hit bool, entry string) {
	if l == nil || len(l.entries) == 0 {
		return false, ""
	}
	if utf8.RuneCountInString(name) > sanctionsNameRunesMax {
		name = string([]rune(name)[:sanctionsNameRunesMax])
	}
	best := int32(-1)
	for c := keyUpper; c < keyCases; c++ {
		words := screenKey(name, c)
		if len(words) == 0 {
			continue
		}
		l.index.candidates(c, words, func(i int32) {
			if best >= 0 && i >= best {
				return
			}
			e := &l.entries[i]
			if (e.Country == "" || country == "" || e.Country == country) && keysMatch(words, screenKey(e.Name, c)) {
				best = i
			}
		})
	}
	if best >= 0 {
		return true, l.entries[best].String()
	}
	if word, scripts := mixedScriptWord(name); word != "" {
		return true, fmt.Sprintf("mixed scripts in one word (%s): %q", strings.Join(scripts, ", "), word)
	}
	return false, ""
}
