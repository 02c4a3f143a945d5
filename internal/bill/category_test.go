package bill_test

import (
	"slices"
	"testing"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/postings"
)

// Every journal entry kind and every bill line type has exactly one
// reporting category, and every category is one of the report's columns:
// a kind added to postings without a category fails here, before a report
// could drop its lines.
func TestEveryLineTypeHasACategory(t *testing.T) {
	types := append([]string{}, bill.LineTypes()...)
	for _, k := range postings.Kinds() {
		if !slices.Contains(types, string(k)) {
			t.Errorf("entry kind %s is not a bill line type of the table", k)
		}
	}
	for _, want := range []string{"FEE", "ADJUSTMENT", "RECEIVABLE", "RECEIVABLE_RECOVERY", "CARD_AUTH", "CARD_AUTH_RELEASE"} {
		if !slices.Contains(types, want) {
			t.Errorf("the agreed line type %s is missing", want)
		}
	}
	used := map[bill.Category]bool{}
	for _, lt := range types {
		c, ok := bill.CategoryOf(lt)
		if !ok {
			t.Errorf("bill line type %s has no reporting category", lt)
			continue
		}
		if !slices.Contains(bill.Categories(), c) {
			t.Errorf("bill line type %s maps to %q, not a report column", lt, c)
		}
		used[c] = true
	}
	for _, c := range bill.Categories() {
		if !used[c] {
			t.Errorf("category %s has no line type", c)
		}
	}
	if _, ok := bill.CategoryOf("NOT_A_TYPE"); ok {
		t.Error("an unknown line type has a category")
	}
	// The categories the issue names, exactly.
	want := []bill.Category{"card_funding", "card_spend", "refunds", "fees", "remittances", "fx",
		"adjustments", "deposits", "holds", "receivables"}
	if !slices.Equal(bill.Categories(), want) {
		t.Errorf("categories %v, want %v", bill.Categories(), want)
	}
	for lt, want := range map[string]bill.Category{
		"FEE": "fees", "FEE_REFUND": "fees", "ADJUSTMENT": "adjustments", "RECEIVABLE": "receivables",
		"RECEIVABLE_RECOVERY": "receivables", "CARD_AUTH": "holds", "CARD_SETTLE": "card_spend", "DEPOSIT": "deposits",
	} {
		if got, _ := bill.CategoryOf(lt); got != want {
			t.Errorf("%s: %s, want %s", lt, got, want)
		}
	}
}
