package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paygate/gateway/internal/cells"
)

// Cell is one cell of GATEWAY_CELLS: its name and its database's URL.
type Cell struct {
	Name string
	URL  string
}

// parseCells reads GATEWAY_CELLS: name=URL pairs separated by commas. A
// pg_auto_failover URL names several hosts with commas of its own
// (postgres://u@h1:5432,h2:5432/db), so a comma starts a new cell only
// when a cell's "xx=" follows it; a host never holds "=".
func parseCells(v string) ([]Cell, error) {
	if v == "" {
		return nil, nil
	}
	var parts []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if len(parts) > 0 && !(len(p) > 2 && p[2] == '=') {
			parts[len(parts)-1] += "," + p
			continue
		}
		parts = append(parts, p)
	}
	var out []Cell
	seen := map[string]bool{}
	for _, p := range parts {
		name, u, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return nil, fmt.Errorf("%q is not name=postgres://… (e.g. a1=postgres://gw@db-a1/gateway)", p)
		}
		if err := cells.CheckName(name); err != nil {
			return nil, err
		}
		if u == "" {
			return nil, fmt.Errorf("cell %s has no URL", name)
		}
		if err := checkDatabaseURL(u); err != nil {
			return nil, fmt.Errorf("cell %s: %v", name, err)
		}
		if seen[name] || seen[u] {
			return nil, fmt.Errorf("cell %s: a cell's name and its database are named once", name)
		}
		seen[name], seen[u] = true, true
		out = append(out, Cell{Name: name, URL: u})
	}
	if len(out) > cells.NumberMax {
		return nil, fmt.Errorf("%d cells: at most %d", len(out), cells.NumberMax)
	}
	return out, nil
}

// maskCells shows GATEWAY_CELLS with every URL's password masked.
func maskCells(v string) string {
	cs, err := parseCells(v)
	if err != nil {
		return "(not valid)"
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name + "=" + maskDatabaseURL(c.URL)
	}
	return strings.Join(out, ",")
}

// checkCells refuses the settings that contradict GATEWAY_CELLS: with
// cells, each cell's URL is its DATABASE_URL, and no one URL applies.
func (c *Config) checkCells() error {
	if len(c.Cells) == 0 {
		if len(c.CellsRead) > 0 {
			return c.errorOf("GATEWAY_CELLS_READ_URLS", "names standbys of cells, and GATEWAY_CELLS is not set")
		}
		return nil
	}
	if c.Demo {
		return c.errorOf("GATEWAY_DEMO", "the demo merchant is made in one database: not with GATEWAY_CELLS")
	}
	for _, r := range c.CellsRead {
		if !slices.ContainsFunc(c.Cells, func(cell Cell) bool { return cell.Name == r.Name }) {
			return c.errorOf("GATEWAY_CELLS_READ_URLS", "cell "+r.Name+" is not one of GATEWAY_CELLS")
		}
	}
	for _, env := range []string{"DATABASE_URL", "DATABASE_READ_URL"} {
		if c.Source(env) != SourceDefault {
			return c.errorOf("GATEWAY_CELLS", "set GATEWAY_CELLS or "+env+", not both: with cells, each cell's URL is given in GATEWAY_CELLS")
		}
	}
	return nil
}

// HomeCell is the cell whose database holds the directory: the first of
// GATEWAY_CELLS (docs/scaling.md, "The directory").
func (c *Config) HomeCell() Cell { return c.Cells[0] }

// ForCell is a copy of c for one cell: its DATABASE_URL is the cell's,
// every other setting the same. The per-cell builder (internal/app) and
// the operator's commands open a cell through it.
func (c *Config) ForCell(cell Cell) *Config {
	cc := *c
	cc.DatabaseURL = cell.URL
	cc.ReadURL = ""
	for _, r := range c.CellsRead {
		if r.Name == cell.Name {
			cc.ReadURL = r.URL // the cell's standby (GATEWAY_CELLS_READ_URLS)
		}
	}
	cc.Cells, cc.CellsRead = nil, nil
	return &cc
}
