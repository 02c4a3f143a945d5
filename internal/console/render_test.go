package console

import (
	"strings"
	"testing"
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
