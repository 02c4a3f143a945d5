package cellaudit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// The operator's data (BINs, FX rates, the sanctions list) is loaded into
// every cell by one command (cmd/gateway) and must be the same in each: a
// card of one cell must not be issued from a BIN another cell has closed,
// nor a remittance screened against an older list. Each table is read as
// (key, value) rows, the columns that say what the operator set and not
// when each cell wrote it (created_at, set_at and the list's version
// number differ between cells by construction).
var operatorTables = []struct {
	name string
	sql  string
}{
	{"bins", `select bin || '/' || currency as key, network || ' ' || type || ' ' || enabled::text as value
		from bins order by 1`},
	{"fx_rates", `select base || '/' || quote as key, trim_scale(mid_rate)::text || ' ' || spread_bps::text || 'bps ' || source as value
		from fx_rates order by 1`},
	// The list screening reads: the latest version's entries, a multiset.
	{"sanctions", `select concat_ws('|', name, coalesce(country, ''), coalesce(list, ''), coalesce(entry_ref, '')) as key,
		count(*)::text || '×' as value
		from sanctions_entries where version = (select max(version) from sanctions_entries) group by 1 order by 1`},
}

// TableDigest is one operator table's digest in one cell: SHA-256 over
// its sorted rows, and how many.
type TableDigest struct {
	Cell   string `json:"cell"`
	Table  string `json:"table"`
	Rows   int    `json:"rows"`
	Digest string `json:"digest"`
}

// keyValue is one operator row.
type keyValue struct {
	Key   string `bun:"key"`
	Value string `bun:"value"`
}

// differencesShown bounds the keys a problem names per table.
const differencesShown = 5

// OperatorData digests each operator table in each cell and names every
// table whose digest is not the same in all of them, with the first keys
// that differ and each cell's value of them.
func OperatorData(ctx context.Context, cs []Cell) ([]TableDigest, []Problem, error) {
	var digests []TableDigest
	var problems []Problem
	for _, t := range operatorTables {
		rows := make([]map[string]string, len(cs))
		distinct := map[string]bool{}
		for i, c := range cs {
			var kvs []keyValue
			if err := c.DB.NewRaw(t.sql).Scan(ctx, &kvs); err != nil {
				return nil, nil, fmt.Errorf("cell %s: reading %s: %w", c.Name, t.name, err)
			}
			h := sha256.New()
			rows[i] = make(map[string]string, len(kvs))
			for _, kv := range kvs {
				fmt.Fprintf(h, "%s\t%s\n", kv.Key, kv.Value)
				rows[i][kv.Key] = kv.Value
			}
			d := hex.EncodeToString(h.Sum(nil))
			distinct[d] = true
			digests = append(digests, TableDigest{Cell: c.Name, Table: t.name, Rows: len(kvs), Digest: d})
		}
		if len(distinct) > 1 {
			problems = append(problems, Problem{Check: CheckOperatorData, Table: t.name,
				Detail: t.name + " is not the same in every cell: " + differences(cs, rows)})
		}
	}
	return digests, problems, nil
}

// differences names the first keys whose value is not the same in every
// cell: "USD/EUR (a1 0.92 50bps operator, b2 0.95 50bps operator)".
func differences(cs []Cell, rows []map[string]string) string {
	keys := map[string]bool{}
	for _, r := range rows {
		for k := range r {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	var out []string
	more := 0
	for _, k := range sorted {
		same := true
		v0, ok0 := rows[0][k]
		for _, r := range rows[1:] {
			if v, ok := r[k]; ok != ok0 || v != v0 {
				same = false
			}
		}
		if same {
			continue
		}
		if len(out) == differencesShown {
			more++
			continue
		}
		var each []string
		for i, c := range cs {
			v, ok := rows[i][k]
			if !ok {
				v = "absent"
			}
			each = append(each, c.Name+" "+v)
		}
		out = append(out, k+" ("+strings.Join(each, ", ")+")")
	}
	s := strings.Join(out, "; ")
	if more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}
