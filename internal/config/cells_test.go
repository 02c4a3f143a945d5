package config

import (
	"strings"
	"testing"
)

// GATEWAY_CELLS is checked at the door: each refusal names the variable
// and says what is wrong, and no URL's password reaches the error.
func TestCellsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no equals", map[string]string{"GATEWAY_CELLS": "postgres://h/db"}, "GATEWAY_CELLS: \"postgres://h/db\" is not name=postgres://"},
		{"name too long", map[string]string{"GATEWAY_CELLS": "abc=postgres://h/db"}, `GATEWAY_CELLS: cell name "abc"`},
		{"name upper case", map[string]string{"GATEWAY_CELLS": "A1=postgres://h/db"}, `GATEWAY_CELLS: cell name "A1"`},
		{"name starts with a digit", map[string]string{"GATEWAY_CELLS": "1a=postgres://h/db"}, `GATEWAY_CELLS: cell name "1a"`},
		{"no URL", map[string]string{"GATEWAY_CELLS": "a1="}, "GATEWAY_CELLS: cell a1 has no URL"},
		{"bad URL", map[string]string{"GATEWAY_CELLS": "a1=postgres://u:hunter2@h:notaport/db"}, "GATEWAY_CELLS: cell a1: is not a PostgreSQL URL"},
		{"name twice", map[string]string{"GATEWAY_CELLS": "a1=postgres://h/x,a1=postgres://h/y"}, "GATEWAY_CELLS: cell a1: a cell's name and its database are named once"},
		{"URL twice", map[string]string{"GATEWAY_CELLS": "a1=postgres://h/x,b1=postgres://h/x"}, "GATEWAY_CELLS: cell b1: a cell's name"},
		{"ten cells", map[string]string{"GATEWAY_CELLS": tenCells()}, "GATEWAY_CELLS: 10 cells: at most 9"},
		{"with DATABASE_URL", map[string]string{"GATEWAY_CELLS": "a1=postgres://h/x", "DATABASE_URL": "postgres://h/y"},
			"GATEWAY_CELLS: set GATEWAY_CELLS or DATABASE_URL, not both"},
		{"with DATABASE_READ_URL", map[string]string{"GATEWAY_CELLS": "a1=postgres://h/x", "DATABASE_READ_URL": "postgres://h/y"},
			"GATEWAY_CELLS: set GATEWAY_CELLS or DATABASE_READ_URL, not both"},
		{"a standby of no cell", map[string]string{"GATEWAY_CELLS": "a1=postgres://h/x", "GATEWAY_CELLS_READ_URLS": "b2=postgres://u:hunter2@s/x"},
			"GATEWAY_CELLS_READ_URLS: cell b2 is not one of GATEWAY_CELLS"},
		{"standbys without cells", map[string]string{"GATEWAY_CELLS_READ_URLS": "a1=postgres://s/x"},
			"GATEWAY_CELLS_READ_URLS: names standbys of cells"},
		{"a bad standby URL", map[string]string{"GATEWAY_CELLS": "a1=postgres://h/x", "GATEWAY_CELLS_READ_URLS": "a1=postgres://u:hunter2@h:notaport/db"},
			"GATEWAY_CELLS_READ_URLS: cell a1: is not a PostgreSQL URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(nil, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
}

func tenCells() string {
	var parts []string
	for _, n := range "abcdefghij" {
		parts = append(parts, string(n)+"1=postgres://h/"+string(n))
	}
	return strings.Join(parts, ",")
}

// A multi-host URL (a pg_auto_failover formation's) keeps its commas; the
// start-up line masks every cell's password; no GATEWAY_CELLS is no cells.
func TestCellsParsed(t *testing.T) {
	t.Parallel()
	c, err := load(nil, map[string]string{"GATEWAY_CELLS": "a1=postgres://gw:hunter2@h1:5432,h2:5432/gw?target_session_attrs=read-write, b2=postgres://gw@h3/gw"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Cell{{"a1", "postgres://gw:hunter2@h1:5432,h2:5432/gw?target_session_attrs=read-write"}, {"b2", "postgres://gw@h3/gw"}}
	if len(c.Cells) != 2 || c.Cells[0] != want[0] || c.Cells[1] != want[1] || c.HomeCell() != want[0] {
		t.Errorf("cells %+v, want %+v", c.Cells, want)
	}
	if cc := c.ForCell(c.Cells[1]); cc.DatabaseURL != want[1].URL || cc.Cells != nil || c.DatabaseURL != "" {
		t.Errorf("ForCell: %q %v; the original's DATABASE_URL %q", cc.DatabaseURL, cc.Cells, c.DatabaseURL)
	}
	line := ""
	for _, a := range c.Attrs() {
		line += a.String() + " "
	}
	if strings.Contains(line, "hunter2") || !strings.Contains(line, "a1=postgres://gw:xxxxx@") {
		t.Errorf("start-up line %s", line)
	}
	none, err := load(nil, map[string]string{})
	if err != nil || none.Cells != nil {
		t.Errorf("no GATEWAY_CELLS: %v %v", none.Cells, err)
	}
}

// parseCells never panics, and what it accepts is a list of valid names
// with URLs that name each once.
func FuzzParseCells(f *testing.F) {
	f.Add("a1=postgres://h/x,b2=postgres://u:p@h1:5432,h2:5432/y")
	f.Add("a1=,=")
	f.Fuzz(func(t *testing.T, v string) {
		cs, err := parseCells(v)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if len(c.Name) != 2 || c.URL == "" || seen[c.Name] {
				t.Fatalf("accepted %+v of %q", c, v)
			}
			seen[c.Name] = true
		}
	})
}

// Each cell reads from its own standby where GATEWAY_CELLS_READ_URLS
// names one, and from its primary where it does not: ForCell gives the
// cell's standby as its DATABASE_READ_URL, as one database has it.
func TestCellsReadURLs(t *testing.T) {
	t.Parallel()
	c, err := load(nil, map[string]string{"GATEWAY_CELLS": "a1=postgres://h/a,b2=postgres://h/b",
		"GATEWAY_CELLS_READ_URLS": "b2=postgres://standby/b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cell, read string }{{"a1", ""}, {"b2", "postgres://standby/b"}} {
		for _, cell := range c.Cells {
			if cell.Name == tc.cell {
				if got := c.ForCell(cell); got.ReadURL != tc.read || got.CellsRead != nil {
					t.Errorf("cell %s reads from %q, want %q", tc.cell, got.ReadURL, tc.read)
				}
			}
		}
	}
}
