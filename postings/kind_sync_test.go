package postings

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The list of entry kinds lives in three places that must say the same: Go
// (Kinds), the database's CHECK entries_kind_check (sql/, the last
// migration that defines it), and the API's contract (docs/openapi.yaml,
// BillLine.type). A new kind that one of them lacks is refused by the
// database or undocumented; this test names the one that differs.
func TestKindsAreTheSameEverywhere(t *testing.T) {
	var goKinds []string
	for _, k := range Kinds() {
		goKinds = append(goKinds, string(k))
	}
	sqlKinds := checkConstraintValues(t, "entries_kind_check")
	if !slices.Equal(sorted(goKinds), sorted(sqlKinds)) {
		t.Errorf("Kinds() %v, sql/ entries_kind_check %v", goKinds, sqlKinds)
	}
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	line := doc.Components.Schemas["BillLine"]
	if line == nil || line.Value.Properties["type"] == nil {
		t.Fatal("docs/openapi.yaml has no BillLine.type")
	}
	// BillLine.type is every bill line type: the kinds and the types only
	// bill lines have (BillTypes, billtype.go).
	var apiKinds, billTypes []string
	for _, v := range line.Value.Properties["type"].Value.Enum {
		s, _ := v.(string)
		apiKinds = append(apiKinds, s)
	}
	for _, k := range BillTypes() {
		billTypes = append(billTypes, string(k))
	}
	if !slices.Equal(sorted(billTypes), sorted(apiKinds)) {
		t.Errorf("BillTypes() %v, docs/openapi.yaml BillLine.type %v", billTypes, apiKinds)
	}
}

// The chart of accounts likewise: AccountTypes and the CHECK
// accounts_type_check.
func TestAccountTypesAreTheSameInSQL(t *testing.T) {
	var goTypes []string
	for _, a := range AccountTypes() {
		goTypes = append(goTypes, string(a))
	}
	sqlTypes := checkConstraintValues(t, "accounts_type_check")
	if !slices.Equal(sorted(goTypes), sorted(sqlTypes)) {
		t.Errorf("AccountTypes() %v, sql/ accounts_type_check %v", goTypes, sqlTypes)
	}
}

// checkConstraintValues returns the values of the CHECK "<column> in (...)"
// named name in the last migration of sql/ that defines it.
func checkConstraintValues(t *testing.T, name string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "sql", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	slices.Sort(files) // numbered: the last one wins
	def := regexp.MustCompile(`constraint ` + name + `\s+check\s*\(\s*\w+\s+in\s*\(([^)]*)\)`)
	value := regexp.MustCompile(`'([^']*)'`)
	var values []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range def.FindAllSubmatch(src, -1) {
			values = values[:0]
			for _, v := range value.FindAllSubmatch(m[1], -1) {
				values = append(values, string(v[1]))
			}
		}
	}
	if len(values) == 0 {
		t.Fatalf("no CHECK %s in sql/", name)
	}
	return values
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}
