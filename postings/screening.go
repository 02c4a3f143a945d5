package postings

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanctions screening of remittance beneficiaries: a pure matcher over a list
// the operator loads (the CLI reads the file and hands ParseSanctionsList a
// reader; nothing here touches the file system).
//
// Matching. A name is normalised (normalizeName): lower case, Latin
// diacritics folded (é → e, ß → ss, ø → o, æ → ae), full-width forms folded
// to ASCII, combining marks dropped, apostrophes and dots deleted (O'Neil →
// oneil, S.A. → sa), every other punctuation or white-space run a single
// space, and trailing legal-form words dropped (ltd, llc, gmbh, co, inc, …).
// A screened name hits an entry when any of these agree:
//
//  1. the normalised names are equal ("ACME Trading Co., Ltd." = "Acme
//     Trading");
//  2. the sets of their words are equal, order ignored ("Ivanov Petr" =
//     "Petr Ivanov"; repeated words count once);
//  3. the names are equal with all spaces removed ("Al-Qaida" = "Alqaida").
//
// and the countries agree: an entry with a country hits only a beneficiary
// of that country (or one whose country is unknown, ""); an entry without a
// country hits every country.
//
// Trade-offs, stated plainly. Screening prefers false positives (a REJECTED
// remittance the operator reviews) to false negatives (a sanctioned payee
// paid), but this matcher is deliberately exact after normalisation:
//
//   - False negatives: no fuzzy matching, so a misspelling, a
//     transliteration variant (Mohammed / Muhammad, Qaddafi / Gaddafi), a
//     missing or extra word (a middle name, "Trading"), an abbreviation
//     ("Intl" / "International") or a name in another script than the
//     list's all escape it. Load the list's aliases (AKA) as rows of their
//     own: that is how the published lists (OFAC SDN, EU, UN, UK) carry
//     these variants. A country-scoped entry misses the same party banking
//     in another country; leave the country empty for entities that move.
//   - False positives: rules 2 and 3 match names that differ in word order
//     or spacing only, which is rare for distinct parties but happens for
//     common personal names; dropping legal forms makes "X Ltd" and "X Inc"
//     the same name. Both are accepted for recall.
//   - Diacritic folding covers Latin letters only (a small table); other
//     scripts are compared as written, lower-cased where they have case.

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
	exact   map[string][]int32 // normalised name → entries
	words   map[string][]int32 // sorted distinct words → entries
	compact map[string][]int32 // normalised name without spaces → entries
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
	l := &SanctionsList{
		exact:   map[string][]int32{},
		words:   map[string][]int32{},
		compact: map[string][]int32{},
	}
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, FieldErrorf("sanctions_list", "line %d is longer than %d bytes", lr.line, sanctionsLineBytesMax)
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, FieldErrorf("sanctions_list", "line %d: %v", pe.Line, pe.Err)
			}
			return nil, FieldErrorf("sanctions_list", "cannot be read: %v", err)
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
			return nil, FieldErrorf("sanctions_list", "line %d has %d fields; expected name,country[,list,id]", line, len(rec))
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
			return nil, FieldErrorf("sanctions_list", "line %d: the name is not UTF-8 text of at most %d characters", line, sanctionsNameRunesMax)
		}
		if e.Country != "" && !IsCountryCode(e.Country) {
			return nil, FieldErrorf("sanctions_list", "line %d: %q is not an ISO 3166-1 alpha-2 country code", line, truncate(e.Country, 8))
		}
		norm := normalizeName(e.Name)
		if norm == "" {
			return nil, FieldErrorf("sanctions_list", "line %d: the name has no letters or digits", line)
		}
		if len(l.entries) >= sanctionsRowsLimit {
			return nil, FieldErrorf("sanctions_list", "has more than %d entries", sanctionsRowsLimit)
		}
		i := int32(len(l.entries))
		l.entries = append(l.entries, e)
		l.exact[norm] = append(l.exact[norm], i)
		l.words[wordSetKey(norm)] = append(l.words[wordSetKey(norm)], i)
		l.compact[strings.ReplaceAll(norm, " ", "")] = append(l.compact[strings.ReplaceAll(norm, " ", "")], i)
	}
	return l, nil
}

// Screen reports whether a beneficiary called name in country matches an
// entry of the list, and that entry (SanctionsEntry.String) when it does.
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
	norm := normalizeName(name)
	if norm == "" {
		return false, ""
	}
	for _, cand := range [][]int32{
		l.exact[norm],
		l.words[wordSetKey(norm)],
		l.compact[strings.ReplaceAll(norm, " ", "")],
	} {
		for _, i := range cand {
			e := l.entries[i]
			if e.Country == "" || country == "" || e.Country == country {
				return true, e.String()
			}
		}
	}
	return false, ""
}

// legalForms are words dropped from the end of a normalised name. They are
// written as normalisation leaves them (dots deleted: "S.A." is "sa").
var legalForms = map[string]bool{
	"ltd": true, "limited": true, "llc": true, "llp": true, "lp": true,
	"inc": true, "incorporated": true, "corp": true, "corporation": true,
	"co": true, "company": true, "plc": true, "gmbh": true, "ag": true,
	"kg": true, "mbh": true, "sa": true, "sas": true, "sarl": true,
	"srl": true, "spa": true, "bv": true, "nv": true, "oy": true, "ab": true,
	"as": true, "asa": true, "aps": true, "pte": true, "pty": true,
	"jsc": true, "ojsc": true, "pjsc": true, "cjsc": true, "ooo": true,
	"zao": true, "oao": true, "fze": true, "fzco": true, "fzc": true,
	"bhd": true, "sdn": true, "kk": true,
}

// latinFolds maps Latin letters with diacritics (lower case) to ASCII.
var latinFolds = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ă': "a", 'ą': "a",
	'æ': "ae", 'ç': "c", 'ć': "c", 'ĉ': "c", 'ċ': "c", 'č': "c",
	'ď': "d", 'đ': "d", 'ð': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ĕ': "e", 'ė': "e", 'ę': "e", 'ě': "e",
	'ĝ': "g", 'ğ': "g", 'ġ': "g", 'ģ': "g", 'ĥ': "h", 'ħ': "h",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ĩ': "i", 'ī': "i", 'ĭ': "i", 'į': "i", 'ı': "i",
	'ĵ': "j", 'ķ': "k", 'ĺ': "l", 'ļ': "l", 'ľ': "l", 'ŀ': "l", 'ł': "l",
	'ñ': "n", 'ń': "n", 'ņ': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ō': "o", 'ŏ': "o", 'ő': "o", 'œ': "oe",
	'ŕ': "r", 'ŗ': "r", 'ř': "r",
	'ś': "s", 'ŝ': "s", 'ş': "s", 'š': "s", 'ș': "s", 'ß': "ss",
	'ţ': "t", 'ť': "t", 'ț': "t", 'ŧ': "t", 'þ': "th",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ũ': "u", 'ū': "u", 'ŭ': "u", 'ů': "u", 'ű': "u", 'ų': "u",
	'ŵ': "w", 'ý': "y", 'ÿ': "y", 'ŷ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
}

// normalizeName is the normalisation described at the top of this file. It
// returns "" for a name without letters or digits.
func normalizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // a separator is pending
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII forms
			r -= 0xFF01 - 0x21
		} else if r == 0x3000 { // ideographic space
			r = ' '
		}
		r = unicode.ToLower(r)
		switch {
		case unicode.Is(unicode.Mn, r): // combining marks (decomposed accents)
			continue
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == '´' || r == '.':
			continue // deleted, not a separator
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			if f, ok := latinFolds[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(r)
			}
		default: // punctuation, symbols, spaces, controls: one separator
			space = true
		}
	}
	words := strings.Fields(b.String())
	for len(words) > 1 && legalForms[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	return strings.Join(words, " ")
}

// wordSetKey is the sorted set of the words of a normalised name.
func wordSetKey(norm string) string {
	words := strings.Fields(norm)
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
