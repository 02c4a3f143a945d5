package rules

import (
	"encoding/csv"
	"fmt"
	"strings"
	"sync"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/paygate/gateway/postings"
)

const testSanctions = `name,country,list,id

ACME TRADING CO. LTD.,IR,OFAC-SDN,1001
Ivanov Petr,,EU,EU-77
"Al-Qaida",,UN,QDe.004
"Müller, Jürgen",DE,TEST,3
Ocean Star Shipping LLC,KP
Zhōng Huá Trading,CN,TEST,5
ALPHA
#1 Arms Dealer,,TEST,8
`

func mustParse(t *testing.T, s string) *SanctionsList {
	t.Helper()
	l, err := ParseSanctionsList(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestScreenKey(t *testing.T) {
	tests := []struct{ in, upper, lower string }{
		{"ACME TRADING CO. LTD.", "acme tradlng", "acrne trading"}, // upper: I is l; lower: m is rn
		{"Acme Trading Co., Ltd.", "acme tradlng", "acrne trading"},
		{"Acme Trading GmbH & Co. KG", "acme tradlng", "acrne trading"}, // "&" separates; trailing kg, co, gmbh dropped
		{"  Müller,   Jürgen ", "muller jurgen", "rnuller jurgen"},
		{"Mu\u0308ller", "muller", "rnuller"}, // decomposed umlaut
		{"Straße Øresund Æther", "strasse oresund aether", "strasse oresund aether"},
		{"O'Brien", "obrlen", "obrien"},
		{"O’Brien", "obrlen", "obrien"},
		{"Al-Qaida", "al qalda", "al qaida"},
		{"ＡＣＭＥ　Ｔｒａｄｉｎｇ", "acme tradlng", "acrne trading"}, // full-width forms (NFKC)
		{"𝐀𝐂𝐌𝐄 𝕋𝕣𝕒𝕕𝕚𝕟𝕘", "acme tradlng", "acrne trading"}, // mathematical letters (NFKC)
		{"S.A.", "sa", "sa"}, // a legal form alone is kept
		{"Banco X S.A.", "banco x", "banco x"},
		{"Banco X LIMITED", "banco x", "banco x"},        // legal forms compared by their own keys
		{"АСМЕ ТRADING", "acme tradlng", "acʍe trading"}, // Cyrillic capitals: the upper key reads them; т is ᴛ, a small capital t
		{"асме", "acme", "acʍe"},                         // Cyrillic м is no m (its prototype is ʍ), but its capital М is M
		{"νιnε", "nlne", "vinꞓ"},                         // Greek ν is v in small letters, N in capitals
		{"Ac\u200bme\u00ad", "acme", "acrne"},            // invisible characters dropped
		{"lVANOV", "lvanov", "lvanov"},                   // l for I
		{"ИВАНОВ Петр", "иbahob πetp", "ᴎbahob πetp"},    // Cyrillic is read as the Latin (or Greek) it looks like
		{"中华贸易", "中华贸易", "中华贸易"},
		{"---", "", ""},
		{"", "", ""},
		{"Ltd Ltd", "ltd", "ltd"},
	}
	for _, tt := range tests {
		up := strings.Join(screenKey(tt.in, keyUpper), " ")
		low := strings.Join(screenKey(tt.in, keyLower), " ")
		if up != tt.upper || low != tt.lower {
			t.Errorf("screenKey(%q) = %q, %q; want %q, %q", tt.in, up, low, tt.upper, tt.lower)
		}
	}
}

func TestScreen(t *testing.T) {
	l := mustParse(t, testSanctions)
	if l.Len() != 8 {
		t.Fatalf("%d entries", l.Len())
	}
	tests := []struct {
		name, country string
		hit           bool
		entry         string
	}{
		{"Acme Trading", "IR", true, "OFAC-SDN:1001 ACME TRADING CO. LTD. (IR)"},
		{"acme trading limited", "IR", true, "OFAC-SDN:1001"},
		{"ACME TRADING CO LTD", "", true, "OFAC-SDN:1001"}, // unknown country: conservative hit
		{"Trading Acme Inc", "IR", true, "OFAC-SDN:1001"},  // word order, other legal form
		{"Acme Trading", "DE", false, ""},                  // entry scoped to IR
		{"Acme Tradings", "IR", false, ""},                 // no fuzzy matching (false negative by design)
		{"Acme Global Trading", "IR", false, ""},           // extra word
		{"Petr Ivanov", "RU", true, "EU:EU-77 Ivanov Petr"},
		{"IVANOV, Petr", "DE", true, "EU:EU-77"},
		{"Ivanov Petr Petrovich", "RU", false, ""},
		{"Alqaida", "AF", true, "UN:QDe.004"}, // spacing variant
		{"AL QAIDA", "", true, "UN:QDe.004"},
		{"Jürgen Müller", "DE", true, "TEST:3"},
		{"Jurgen Mueller", "DE", false, ""}, // transliteration variant: a documented miss
		{"Ocean Star Shipping", "KP", true, "Ocean Star Shipping LLC (KP)"},
		{"Zhong Hua Trading Co", "CN", true, "TEST:5"},
		{"Alpha Ltd", "US", true, "ALPHA"},
		{"Beta", "US", false, ""},
		{"#1 Arms Dealer", "SY", true, "TEST:8"}, // "#" starts a name, not a comment
		{"1 arms dealer", "SY", true, "TEST:8"},
		{"", "US", false, ""},
		{"!!!", "US", false, ""},
	}
	for _, tt := range tests {
		hit, entry := l.Screen(tt.name, tt.country)
		if hit != tt.hit || !strings.Contains(entry, tt.entry) {
			t.Errorf("Screen(%q, %q) = %v %q, want %v %q", tt.name, tt.country, hit, entry, tt.hit, tt.entry)
		}
	}
	var nilList *SanctionsList
	if hit, _ := nilList.Screen("ACME TRADING", "IR"); hit || nilList.Len() != 0 {
		t.Error("a nil list hit")
	}
	// A very long name is screened on its first characters without trouble.
	if hit, _ := l.Screen(strings.Repeat("x", 100000), "US"); hit {
		t.Error("long name hit")
	}
}

func TestParseSanctionsListErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"bad country", "ACME,XX\n", "line 1"},
		{"too many fields", "ACME,IR,L,1,extra\n", "5 fields"},
		{"no letters", "name,country\nACME,IR\n---,IR\n", "line 3"},
		{"line too long", "ACME,IR\n" + strings.Repeat("A", sanctionsLineBytesMax+1) + ",IR\n", "line 2 is longer"},
		{"bad quotes", "\"ACME,IR\n", "line"},
		{"invalid utf8", "AC\xffME,IR\n", "UTF-8"},
		{"name too long", strings.Repeat("a ", sanctionsNameRunesMax) + "b,IR\n", "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSanctionsList(strings.NewReader(tt.in))
			e := postings.AsError(err)
			if err == nil || e.Code != postings.EINVALID || e.Field != "sanctions_list" || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want EINVALID on sanctions_list with %q", err, tt.want)
			}
		})
	}
	old := sanctionsRowsLimit
	sanctionsRowsLimit = 3
	defer func() { sanctionsRowsLimit = old }()
	if _, err := ParseSanctionsList(strings.NewReader("a\nb\nc\n")); err != nil {
		t.Fatalf("3 rows at the limit: %v", err)
	}
	if _, err := ParseSanctionsList(strings.NewReader("a\nb\nc\nd\n")); err == nil || !strings.Contains(err.Error(), "more than 3") {
		t.Fatalf("4 rows over a limit of 3: %v", err)
	}
	// The header is "name,country…"; a lone "name" is an entry.
	if l := mustParse(t, "name\n"); l.Len() != 1 {
		t.Fatalf("lone name: %d entries", l.Len())
	}
	if l := mustParse(t, "Name,Country,List,ID\nACME,IR,,\n"); l.Len() != 1 {
		t.Fatalf("header: %d entries", l.Len())
	}
	// An empty list parses, and hits nothing.
	l := mustParse(t, "name,country\n")
	if hit, _ := l.Screen("ACME", "IR"); hit || l.Len() != 0 {
		t.Fatal("empty list")
	}
}

func TestScreenConcurrent(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "Entity Number %d Holdings,,L,%d\n", i, i)
	}
	l := mustParse(t, b.String())
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < 2000; i += 8 {
				if hit, _ := l.Screen(fmt.Sprintf("holdings entity number %d", i), "US"); !hit {
					t.Errorf("entity %d missed", i)
				}
			}
		}(g)
	}
	wg.Wait()
}

// lookAlikes are look-alike letters of other alphabets, written by hand
// from the glyphs (not from the confusables table under test), by variant.
var lookAlikes = map[string]map[rune]rune{
	"Cyrillic capitals": {'A': 'А', 'B': 'В', 'C': 'С', 'E': 'Е', 'H': 'Н', 'I': 'І', 'J': 'Ј', 'K': 'К',
		'M': 'М', 'O': 'О', 'P': 'Р', 'S': 'Ѕ', 'T': 'Т', 'X': 'Х', 'Y': 'У'},
	"Cyrillic small": {'a': 'а', 'c': 'с', 'd': 'ԁ', 'e': 'е', 'h': 'һ', 'i': 'і', 'j': 'ј', 'o': 'о',
		'p': 'р', 'q': 'ԛ', 's': 'ѕ', 'w': 'ԝ', 'x': 'х', 'y': 'у'},
	"Greek capitals": {'A': 'Α', 'B': 'Β', 'E': 'Ε', 'H': 'Η', 'I': 'Ι', 'K': 'Κ', 'M': 'Μ', 'N': 'Ν',
		'O': 'Ο', 'P': 'Ρ', 'T': 'Τ', 'X': 'Χ', 'Y': 'Υ', 'Z': 'Ζ'},
	"Greek small":      {'i': 'ι', 'n': 'η', 'o': 'ο', 'p': 'ρ', 'u': 'υ', 'v': 'ν'},
	"Armenian small":   {'g': 'ց', 'h': 'հ', 'n': 'ո', 'o': 'օ', 'q': 'զ', 'u': 'ս'},
	"Latin and digits": {'I': 'l', 'l': 'I', 'O': '0', 'o': '0', 'i': '1'},
}

// lookAlikeVariants returns the variants of a listed name a hostile client
// could send for it, by description; each differs from the name.
func lookAlikeVariants(name string) map[string]string {
	base := norm.NFD.String(name) // accents apart, so that ü's u can be replaced too
	out := map[string]string{}
	add := func(desc, v string) {
		if v != base && v != name {
			out[desc] = v
		}
	}
	for desc, table := range lookAlikes {
		src := base
		switch {
		case strings.Contains(desc, "capitals"):
			src = strings.ToUpper(base)
		case strings.Contains(desc, "small"):
			src = strings.ToLower(base)
		}
		all := []rune(src)
		for i, r := range all {
			if sub, ok := table[r]; ok {
				all[i] = sub
				// One letter alone: a look-alike inside a Latin word.
				one := []rune(src)
				one[i] = sub
				add(fmt.Sprintf("%s, letter %d alone", desc, i), string(one))
			}
		}
		add(desc+", every letter", string(all)) // whole words in the other alphabet where it has every letter
	}
	var full, bold, zw strings.Builder
	for _, r := range base {
		switch {
		case r > ' ' && r < 0x7f:
			full.WriteRune(r - 0x21 + 0xFF01)
		case r == ' ':
			full.WriteRune('\u3000')
		default:
			full.WriteRune(r)
		}
		switch {
		case r >= 'A' && r <= 'Z':
			bold.WriteRune(r - 'A' + 0x1D400)
		case r >= 'a' && r <= 'z':
			bold.WriteRune(r - 'a' + 0x1D41A)
		default:
			bold.WriteRune(r)
		}
		zw.WriteRune(r)
		zw.WriteRune('\u200b')
	}
	add("full-width", full.String())
	add("mathematical bold", bold.String())
	add("zero-width spaces", zw.String())
	return out
}

// TestScreenLookAlikes screens look-alike variants of every entry of the
// list: each must hit that very entry, not merely be flagged.
func TestScreenLookAlikes(t *testing.T) {
	l := mustParse(t, testSanctions)
	for _, e := range l.Entries() {
		country := e.Country
		if country == "" {
			country = "US"
		}
		variants := lookAlikeVariants(e.Name)
		if len(variants) < 10 {
			t.Fatalf("%q: only %d variants", e.Name, len(variants))
		}
		for desc, v := range variants {
			if hit, entry := l.Screen(v, country); !hit || entry != e.String() {
				t.Errorf("%s of %q: Screen(%q) = %v %q, want the entry", desc, e.Name, v, hit, entry)
			}
		}
	}
}

// TestScreenMixedScripts: a word mixing alphabets hits even when its
// skeleton is on no list; names in one alphabet per word do not.
func TestScreenMixedScripts(t *testing.T) {
	l := mustParse(t, testSanctions)
	tests := []struct {
		name  string
		entry string // "" for no hit
	}{
		{"Acmе Holdings", `mixed scripts in one word (Cyrillic, Latin): "Acmе"`}, // Cyrillic е
		{"Σony Music", `mixed scripts in one word (Greek, Latin): "Σony"`},
		{"Jоhn Smith", `mixed scripts in one word (Cyrillic, Latin): "Jоhn"`},
		{"Smith Ivаn", `mixed scripts in one word (Cyrillic, Latin): "Ivаn"`},
		{"Gօogle", `mixed scripts in one word (Armenian, Latin): "Gօogle"`},
		{"Пeтров", `mixed scripts in one word (Cyrillic, Latin): "Пeтров"`}, // a Latin e in a Cyrillic word
		{"Ac.mе", `mixed scripts in one word (Cyrillic, Latin): "Ac.mе"`},   // a dot does not split a word
		{"Иван Петров", ""},                                                 // one alphabet
		{"Acme Трейдинг", ""},                                               // one alphabet per word
		{"Sonyカメラ", ""},                                                     // Latin with Katakana: allowed (TR39 highly restrictive)
		{"LG전자", ""},                                                        // Latin with Hangul
		{"Γιάννης Παπαδόπουλος", ""},                                        // Greek with accents
		{"Zoë 3M", ""},
	}
	for _, tt := range tests {
		hit, entry := l.Screen(tt.name, "DE")
		if hit != (tt.entry != "") || entry != tt.entry {
			t.Errorf("Screen(%q) = %v %q, want %q", tt.name, hit, entry, tt.entry)
		}
	}
	// Without a list nothing hits, mixed or not: the caller decides.
	empty := mustParse(t, "name,country\n")
	if hit, _ := empty.Screen("Acmе Holdings", "DE"); hit {
		t.Error("an empty list flagged a mixed-script name")
	}
}

// FuzzScreen: any listed name hits itself, and its look-alike spelled in
// capitals, and keys never hold an empty or spaced word.
func FuzzScreen(f *testing.F) {
	for _, s := range []string{"ACME TRADING CO. LTD.", "Müller, Jürgen", "АСМЕ", "𝐀𝐂𝐌𝐄", "Ac\u200bme", "ß", "İstanbul", "ǅemal"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for c := keyUpper; c < keyCases; c++ {
			for _, w := range screenKey(name, c) {
				if w == "" || strings.ContainsAny(w, " \t") {
					t.Fatalf("screenKey(%q) has word %q", name, w)
				}
			}
		}
		var b strings.Builder
		w := csv.NewWriter(&b)
		_ = w.Write([]string{name, ""})
		w.Flush()
		l, err := ParseSanctionsList(strings.NewReader("name,country\n" + b.String()))
		if err != nil || l.Len() != 1 {
			return // not a valid list name (no letters, too long, …)
		}
		listed := l.Entries()[0].Name // as parsed: trimmed
		for _, v := range []string{listed, strings.ToUpper(listed), strings.ToLower(listed)} {
			if hit, _ := l.Screen(v, "US"); !hit {
				t.Fatalf("listed %q: Screen(%q) missed", listed, v)
			}
		}
	})
}
