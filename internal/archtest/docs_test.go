package archtest

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The import table of docs/architecture.md ("What may import what") is the
// allowed map, row by row, so that the page cannot go stale: a package
// placed in the map and not on the page, or listed there with other
// imports, fails here. A row names its packages in backquotes in its first
// cell and what they may import in backquotes in its second ("nothing"
// when empty); text outside backquotes is commentary.
func TestArchitectureImportTableIsTheMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, problems := importTable(string(doc))
	problems = append(problems, tableDiff(rows, allowed)...)
	for _, why := range problems {
		t.Error("docs/architecture.md: " + why)
	}
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// importTable reads the first table of the section "What may import
// what": for each package named in a first cell, the packages of its
// second.
func importTable(doc string) (map[string][]string, []string) {
	_, section, ok := strings.Cut(doc, "\n## What may import what\n")
	if !ok {
		return nil, []string{`no section "## What may import what"`}
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{}
	var problems []string
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if inTable && !strings.HasPrefix(line, "|") {
			break // the end of the first table
		}
		inTable = strings.HasPrefix(line, "|")
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 4 {
			continue // not a row of the table (or its header)
		}
		var imports []string
		for _, m := range backquoted.FindAllStringSubmatch(cells[2], -1) {
			imports = append(imports, m[1])
		}
		slices.Sort(imports)
		for _, m := range backquoted.FindAllStringSubmatch(cells[1], -1) {
			pkg := m[1]
			if isCommand(pkg) {
				continue
			}
			if _, dup := rows[pkg]; dup {
				problems = append(problems, pkg+" has two rows")
			}
			rows[pkg] = imports
		}
	}
	return rows, problems
}

// isCommand reports a package that may import anything, or the table's
// name for all of them under a directory ("cmd/...").
func isCommand(pkg string) bool {
	return slices.ContainsFunc(commands, func(c string) bool {
		return strings.HasPrefix(pkg, c) || strings.TrimSuffix(pkg, "...") == c
	})
}

// tableDiff compares the page's rows with the map.
func tableDiff(rows, want map[string][]string) []string {
	var out []string
	for pkg, imports := range want {
		sorted := slices.Sorted(slices.Values(imports))
		got, ok := rows[pkg]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("no row for %s, which may import %s", pkg, cells(sorted)))
		case !slices.Equal(got, sorted):
			out = append(out, fmt.Sprintf("%s may import %s, the page says %s", pkg, cells(sorted), cells(got)))
		}
	}
	for pkg := range rows {
		if _, ok := want[pkg]; !ok {
			out = append(out, "a row for "+pkg+", which internal/archtest does not place")
		}
	}
	slices.Sort(out)
	return out
}

// cells writes imports as the table does.
func cells(imports []string) string {
	if len(imports) == 0 {
		return "nothing"
	}
	return "`" + strings.Join(imports, "`, `") + "`"
}

// The comparison finds a missing row, a row that differs and a row of an
// unknown package, or the test above passes whatever the page says.
func TestImportTableDiffsAreFound(t *testing.T) {
	doc := "# A\n\n## What may import what\n\n| package | may import |\n| --- | --- |\n" +
		"| `postings`, `sql` | nothing |\n" +
		"| `ledger` (the core) | `postings` (money), `sql` |\n" +
		"| `internal/cards` | `ledger` |\n" +
		"| `internal/gone` | `ledger` |\n" +
		"| `cmd/...` | anything |\n\n| another table | `internal/fx` |\n| `postings` | `ledger` |\n\n## Next\n\n| `internal/fx` | `ledger` |\n"
	rows, problems := importTable(doc)
	problems = append(problems, tableDiff(rows, map[string][]string{
		"postings": {}, "sql": {}, "ledger": {"sql", "postings"},
		"internal/cards": {"ledger", "internal/fx"}, "internal/fx": {"ledger"},
	})...)
	want := []string{"a row for internal/gone, which internal/archtest does not place",
		"internal/cards may import `internal/fx`, `ledger`, the page says `ledger`",
		"no row for internal/fx, which may import `ledger`"}
	if !slices.Equal(problems, want) {
		t.Errorf("got %q,\nwant %q", problems, want)
	}
}
