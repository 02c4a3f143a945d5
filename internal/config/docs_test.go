package config

import (
	"os"
	"strings"
	"testing"
)

// docs/operations.md lists every setting with its flag: a setting added to
// the table and not to the page fails here.
func TestOperationsDocListsEverySetting(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, v := range Variables() {
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("docs/operations.md does not list %s", v)
		}
		if f := Flag(v); f != "" && !strings.Contains(doc, "`--"+f+"`") {
			t.Errorf("docs/operations.md does not give %s's flag --%s", v, f)
		}
	}
}
