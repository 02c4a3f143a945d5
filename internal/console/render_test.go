package console

import (
	"strings"
	"testing"
	"testing/fstest"
)

// A page package's template named like one the console has would shadow
// it (or be shadowed) silently: it is refused when the console is built.
func TestPagesRefuseANameTaken(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.add(templateFS); err == nil || !strings.Contains(err.Error(), "two pages named") {
		t.Errorf("adding the console's templates again: %v, want the refusal of a name taken", err)
	}
}

// A page package's templates/partials/*.html are the pieces its pages
// share (books' four reconciliation pages): parsed into each page, never
// pages of their own.
func TestPagesShareTheirPackagesPartials(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"templates/one.html":            {Data: []byte(`{{define "content"}}one: {{template "piece" .Title}}{{end}}`)},
		"templates/two.html":            {Data: []byte(`{{define "content"}}two: {{template "piece" .Title}}{{end}}`)},
		"templates/partials/piece.html": {Data: []byte(`{{define "piece"}}[{{.}}]{{end}}`)},
	}
	if err := p.add(fsys); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.set["piece"]; ok {
		t.Error("a partial was added as a page")
	}
	for _, name := range []string{"one", "two"} {
		var b strings.Builder
		if err := p.set[name].ExecuteTemplate(&b, "content", view{Title: "<T>"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := name + ": [&lt;T&gt;]"; b.String() != want {
			t.Errorf("%s renders %q, want %q", name, b.String(), want)
		}
	}
}
