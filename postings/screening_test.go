package postings

import (
	"fmt"
	"strings"
	"sync"
	"testing"
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

func TestNormalizeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ACME TRADING CO. LTD.", "acme trading"},
		{"Acme Trading Co., Ltd.", "acme trading"},
		{"Acme Trading GmbH & Co. KG", "acme trading"}, // "&" separates; trailing kg, co, gmbh dropped
		{"  Müller,   Jürgen ", "muller jurgen"},
		{"Mu\u0308ller", "muller"}, // decomposed umlaut
		{"Straße Øresund Æther", "strasse oresund aether"},
		{"O'Brien", "obrien"},
		{"O’Brien", "obrien"},
		{"Al-Qaida", "al qaida"},
		{"ＡＣＭＥ　Ｔｒａｄｉｎｇ", "acme trading"}, // full-width forms
		{"S.A.", "sa"}, // a legal form alone is kept
		{"Banco X S.A.", "banco x"},
		{"ИВАНОВ Петр", "иванов петр"},
		{"中华贸易", "中华贸易"},
		{"---", ""},
		{"", ""},
		{"Ltd Ltd", "ltd"},
	}
	for _, tt := range tests {
		if got := normalizeName(tt.in); got != tt.want {
			t.Errorf("normalizeName(%q) = %q, want %q", tt.in, got, tt.want)
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
			e := AsError(err)
			if err == nil || e.Code != EINVALID || e.Field != "sanctions_list" || !strings.Contains(err.Error(), tt.want) {
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
