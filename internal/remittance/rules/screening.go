package rules

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
)

// Sanctions screening of remittance beneficiaries: a pure matcher over a list
// the operator loads (the CLI reads the file and hands ParseSanctionsList a
// reader; nothing here touches the file system).
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

// Bounds of ParseSanctionsList.
const (
	// SanctionsRowsMax bounds the entries of one list: the consolidated
	// public lists together hold well under 100 000 names and aliases.
	SanctionsRowsMax = 1_000_000
	// sanctionsLineBytesMax bounds one line of the CSV.
	sanctionsLineBytesMax = 4096
	// sanctionsNameRunesMax bounds a listed name (vessel and entity names
	// with their aliases run long, but not this long).
	sanctionsNameRunesMax = 512
)

// sanctionsRowsLimit is SanctionsRowsMax; tests lower it.
var sanctionsRowsLimit = SanctionsRowsMax

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
// immutable once parsed, so one list may be screened from many goroutines.
type SanctionsList struct {
	entries []SanctionsEntry
	keys    [keyCases]nameIndex // by the upper key, by the lower key
}

// nameIndex finds entries by one kind of key, for each matching rule.
type nameIndex struct {
	exact   map[string][]int32 // key → entries
	words   map[string][]int32 // sorted distinct words of the key → entries
	compact map[string][]int32 // key without spaces → entries
}

func (x *nameIndex) add(words []string, i int32) {
	if x.exact == nil {
		x.exact, x.words, x.compact = map[string][]int32{}, map[string][]int32{}, map[string][]int32{}
	}
	exact, set, compact := ruleKeys(words)
	x.exact[exact] = append(x.exact[exact], i)
	x.words[set] = append(x.words[set], i)
	x.compact[compact] = append(x.compact[compact], i)
}

// lookup returns the entries a name's key finds, by rule.
func (x *nameIndex) lookup(words []string) [3][]int32 {
	exact, set, compact := ruleKeys(words)
	return [3][]int32{x.exact[exact], x.words[set], x.compact[compact]}
}

// ruleKeys are the keys of the three matching rules for a name's words.
func ruleKeys(words []string) (exact, set, compact string) {
	return strings.Join(words, " "), wordSetKey(words), strings.Join(words, "")
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

// ParseSanctionsList reads a sanctions list as CSV, one entry per line:
//
//	name,country[,list,id]
//
// country is an ISO 3166-1 alpha-2 code or empty (any country); list and id
// are optional and only reported. A first line "name,country[,…]" is a
// header and skipped; blank lines are skipped. There are no comment lines: a
// listed name may start with "#" ("#1 Trading"), and encoding/csv writes
// such a name unquoted. Fields may be quoted CSV-style ("Acme, Inc.",US). At most
// SanctionsRowsMax entries and 4096 bytes per line; a name must keep at
// least one letter or digit after normalisation. Any malformed line fails
// the whole list (EINVALID, naming the line): a silently shortened list
// would screen less than the operator believes.
func ParseSanctionsList(r io.Reader) (*SanctionsList, error) {
	lr := &lineLimitReader{r: bufio.NewReaderSize(r, 64<<10), max: sanctionsLineBytesMax}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	l := &SanctionsList{}
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, postings.FieldErrorf("sanctions_list", "line %d is longer than %d bytes", lr.line, sanctionsLineBytesMax)
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, postings.FieldErrorf("sanctions_list", "line %d: %v", pe.Line, pe.Err)
			}
			return nil, postings.FieldErrorf("sanctions_list", "cannot be read: %v", err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if len(rec) >= 2 && strings.EqualFold(strings.TrimSpace(rec[0]), "name") &&
				strings.EqualFold(strings.TrimSpace(rec[1]), "country") {
				continue
			}
		}
		if len(rec) > 4 {
			return nil, postings.FieldErrorf("sanctions_list", "line %d has %d fields; expected name,country[,list,id]", line, len(rec))
		}
		e := SanctionsEntry{Name: strings.TrimSpace(rec[0])}
		if len(rec) > 1 {
			e.Country = strings.ToUpper(strings.TrimSpace(rec[1]))
		}
		if len(rec) > 2 {
			e.List = strings.TrimSpace(rec[2])
		}
		if len(rec) > 3 {
			e.ID = strings.TrimSpace(rec[3])
		}
		if !utf8.ValidString(e.Name) || utf8.RuneCountInString(e.Name) > sanctionsNameRunesMax {
			return nil, postings.FieldErrorf("sanctions_list", "line %d: the name is not UTF-8 text of at most %d characters", line, sanctionsNameRunesMax)
		}
		if r, found := invisibleInText(e.Name); found {
			return nil, postings.FieldErrorf("sanctions_list", "line %d: the name %s", line, invisibleMessage(r))
		}
		if e.Country != "" && !IsCountryCode(e.Country) {
			return nil, postings.FieldErrorf("sanctions_list", "line %d: %q is not an ISO 3166-1 alpha-2 country code", line, truncate(e.Country, 8))
		}
		var keys [keyCases][]string
		for c := keyUpper; c < keyCases; c++ {
			keys[c] = screenKey(e.Name, c)
		}
		if len(keys[keyUpper]) == 0 || len(keys[keyLower]) == 0 {
			return nil, postings.FieldErrorf("sanctions_list", "line %d: the name has no letters or digits", line)
		}
		if len(l.entries) >= sanctionsRowsLimit {
			return nil, postings.FieldErrorf("sanctions_list", "has more than %d entries", sanctionsRowsLimit)
		}
		i := int32(len(l.entries))
		l.entries = append(l.entries, e)
		for c := keyUpper; c < keyCases; c++ {
			l.keys[c].add(keys[c], i)
		}
	}
	return l, nil
}

// Screen reports whether a beneficiary called name in country matches an
// entry of the list, and that entry (SanctionsEntry.String) when it does; a
// name matching no entry but mixing scripts in one word is a hit as well,
// reported as "mixed scripts in one word (Cyrillic, Latin): "Аcme"".
// An empty or nil list never hits: whether to pay without a list loaded is
// the caller's decision, not the matcher's. A name longer than any listed
// one is still screened (on its first sanctionsNameRunesMax characters).
func (l *SanctionsList) Screen(name, country string) (hit bool, entry string) {
	if l == nil || len(l.entries) == 0 {
		return false, ""
	}
	if utf8.RuneCountInString(name) > sanctionsNameRunesMax {
		name = string([]rune(name)[:sanctionsNameRunesMax])
	}
	for c := keyUpper; c < keyCases; c++ {
		words := screenKey(name, c)
		if len(words) == 0 {
			continue
		}
		for _, cand := range l.keys[c].lookup(words) {
			for _, i := range cand {
				e := l.entries[i]
				if e.Country == "" || country == "" || e.Country == country {
					return true, e.String()
				}
			}
		}
	}
	if word, scripts := mixedScriptWord(name); word != "" {
		return true, fmt.Sprintf("mixed scripts in one word (%s): %q", strings.Join(scripts, ", "), word)
	}
	return false, ""
}

// wordSetKey is the sorted set of the words of a key.
func wordSetKey(key []string) string {
	words := append([]string(nil), key...)
	sort.Strings(words)
	out := words[:0]
	for i, w := range words {
		if i == 0 || w != words[i-1] {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

var errLineTooLong = errors.New("line too long")

// lineLimitReader fails with errLineTooLong when a line exceeds max bytes,
// so that one endless line cannot exhaust memory in the CSV reader, and
// counts lines for error messages.
type lineLimitReader struct {
	r    *bufio.Reader
	max  int
	cur  int // bytes of the current line so far
	line int // 1-based number of the current line
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if l.line == 0 {
		l.line = 1
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.line++
			l.cur = 0
			continue
		}
		l.cur++
		if l.cur > l.max {
			return 0, errLineTooLong
		}
	}
	return n, err
}
