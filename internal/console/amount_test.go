package console

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

// Every kind of amount a page holds renders with thousands separators,
// exactly, and a negative one with its minus sign and the neg class.
func TestMoneyFormats(t *testing.T) {
	usd, _ := postings.LookupCurrency("USD")
	cases := []struct {
		name string
		v    any
		cur  []string
		want string
	}{
		{"USD minor", int64(123456789), []string{"USD"}, `<span class="amt">1,234,567.89 USD</span>`},
		{"JPY minor", int64(1500), []string{"JPY"}, `<span class="amt">1,500 JPY</span>`},
		{"KWD minor", int64(1234567), []string{"KWD"}, `<span class="amt">1,234.567 KWD</span>`},
		{"small", int64(5), []string{"USD"}, `<span class="amt">0.05 USD</span>`},
		{"hundreds", int64(99999), []string{"USD"}, `<span class="amt">999.99 USD</span>`},
		{"negative minor", int64(-123456789), []string{"USD"}, `<span class="amt neg">-1,234,567.89 USD</span>`},
		{"min int64", int64(-9223372036854775808), []string{"JPY"}, `<span class="amt neg">-9,223,372,036,854,775,808 JPY</span>`},
		{"unknown currency", int64(1234), []string{"XYZ"}, `<span class="amt">1234 (minor units) XYZ</span>`},
		{"Money", postings.Money{Minor: -100000, Currency: usd}, nil, `<span class="amt neg">-1,000.00 USD</span>`},
		{"*Money", &postings.Money{Minor: 100000, Currency: usd}, nil, `<span class="amt">1,000.00 USD</span>`},
		{"nil *Money", (*postings.Money)(nil), nil, ``},
		{"decimal string", "1234567.89", nil, `<span class="amt">1,234,567.89</span>`},
		{"decimal string and currency", "1234.567", []string{"KWD"}, `<span class="amt">1,234.567 KWD</span>`},
		{"json.Number", json.Number("-1500"), nil, `<span class="amt neg">-1,500</span>`},
		{"not a decimal", "n/a <b>", nil, `<span class="amt">n/a &lt;b&gt;</span>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := money(c.v, c.cur...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("money(%v, %v) = %s, want %s", c.v, c.cur, got, c.want)
			}
		})
	}
	if _, err := money(1.5, "USD"); err == nil {
		t.Error("a float is formatted; want an error (a template bug, a 500)")
	}
}

// The helper is what the pages call: a template renders it as markup in
// text, and as plain text (no tags) inside an attribute.
func TestMoneyInTemplate(t *testing.T) {
	tpl := template.Must(template.New("").Funcs(template.FuncMap{"money": money}).Parse(
		`<td>{{money .M "USD"}}</td><input value="{{money .M "USD"}}">`))
	var b bytes.Buffer
	if err := tpl.Execute(&b, map[string]int64{"M": -250000}); err != nil {
		t.Fatal(err)
	}
	if want := `<td><span class="amt neg">-2,500.00 USD</span></td>`; !strings.Contains(b.String(), want) {
		t.Errorf("got %s, want %s in it", b.String(), want)
	}
	if strings.Contains(b.String(), `value="<span`) || strings.Contains(b.String(), `value="&lt;span`) {
		t.Errorf("markup inside an attribute: %s", b.String())
	}
}

// The journal's table shows a hash shortened, whole in its title.
func TestShortHash(t *testing.T) {
	var h postings.Hash
	for i := range h {
		h[i] = byte(i)
	}
	full := h.String()
	got := string(shortHash(h))
	want := `<code class="hash" title="` + full + `">` + full[:8] + "…" + full[len(full)-8:] + `</code>`
	if got != want {
		t.Errorf("shortHash = %s, want %s", got, want)
	}
}

// groupDecimal only inserts commas: taking them out gives back the input,
// and anything it does not take for a decimal comes back unchanged.
func FuzzGroupDecimal(f *testing.F) {
	for _, s := range []string{"1234567.89", "-1500", "0.001", "", "-", "1.2.3", "+12345", "١٢٣٤"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := groupDecimal(s)
		if strings.Contains(s, ",") {
			return
		}
		if back := strings.ReplaceAll(got, ",", ""); back != s {
			t.Fatalf("groupDecimal(%q) = %q: without commas %q", s, got, back)
		}
		whole, _, _ := strings.Cut(strings.TrimLeft(got, "+-"), ".")
		for _, g := range strings.Split(whole, ",")[1:] {
			if len(g) != 3 {
				t.Fatalf("groupDecimal(%q) = %q: a group of %d digits", s, got, len(g))
			}
		}
	})
}
