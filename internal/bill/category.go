package bill

import "github.com/paygate/gateway/postings"

// Reporting categories (docs/finance.md, "Balance report"): what finance
// groups the movements of a period by, in the spirit of Stripe's
// reporting_category. Every bill line type — each journal entry kind, and
// the line types the bill derives beside them — maps to exactly one
// category, in the one table below; the balance report, its CSV, the CLI
// and the console all read it, so a line type is never counted in two
// places or in none.

// Category is a reporting category.
type Category string

// The reporting categories, in their report order.
const (
	CategoryCardFunding Category = "card_funding" // money between funding and cards
	CategoryCardSpend   Category = "card_spend"   // captures paid to the network
	CategoryRefunds     Category = "refunds"      // merchant refunds from the network
	CategoryFees        Category = "fees"         // fees and fee refunds
	CategoryRemittances Category = "remittances"  // remittances out and returned
	CategoryFX          Category = "fx"           // conversions between currencies
	CategoryAdjustments Category = "adjustments"  // operators' corrections
	CategoryDeposits    Category = "deposits"     // money from the merchant's bank
	CategoryHolds       Category = "holds"        // authorizations held and released
	CategoryReceivables Category = "receivables"  // what a card owes, and its recovery
)

// Categories lists every category in report order (the CSV's columns).
func Categories() []Category {
	return []Category{
		CategoryCardFunding, CategoryCardSpend, CategoryRefunds, CategoryFees, CategoryRemittances,
		CategoryFX, CategoryAdjustments, CategoryDeposits, CategoryHolds, CategoryReceivables,
	}
}

// Bill line types the bill derives beside the entry kinds (the names agreed
// in issue 29, point 2): a capture beyond what the card holds, and its later
// recovery. They are strings here, not postings.Kind constants, because they
// name lines, not journal entries; the balance report names them for the
// movements of a card's receivable account.
const (
	LineReceivable         = "RECEIVABLE"
	LineReceivableRecovery = "RECEIVABLE_RECOVERY"
)

// lineCategories is THE table: every bill line type and its category.
// TestEveryLineTypeHasACategory fails when a kind of postings.Kinds() or a
// line type above is missing.
//
// Why these: a card's funding, top-up, withdrawal and the balance a
// cancelled card gives back all move money between the merchant's funding
// and its cards (card_funding); an authorization, its release and the
// network's reversal of it only move money into and out of a hold (holds);
// a capture is spend; REMIT_SETTLE moves no merchant balance (it is in no
// bill line) but is a remittance's step, so it has one place too.
var lineCategories = map[string]Category{
	string(postings.KindDeposit):          CategoryDeposits,
	string(postings.KindCardFund):         CategoryCardFunding,
	string(postings.KindCardTransferIn):   CategoryCardFunding,
	string(postings.KindCardTransferOut):  CategoryCardFunding,
	string(postings.KindCardCancelRefund): CategoryCardFunding,
	string(postings.KindCardAuth):         CategoryHolds,
	string(postings.KindCardAuthRelease):  CategoryHolds,
	string(postings.KindReversal):         CategoryHolds,
	string(postings.KindCardSettle):       CategoryCardSpend,
	string(postings.KindCardRefund):       CategoryRefunds,
	string(postings.KindRemitOut):         CategoryRemittances,
	string(postings.KindRemitSettle):      CategoryRemittances,
	string(postings.KindRemitReturn):      CategoryRemittances,
	string(postings.KindFee):              CategoryFees,
	string(postings.KindFeeRefund):        CategoryFees,
	string(postings.KindFX):               CategoryFX,
	string(postings.KindAdjustment):       CategoryAdjustments,
	LineReceivable:                        CategoryReceivables,
	LineReceivableRecovery:                CategoryReceivables,
}

// CategoryOf is the reporting category of a bill line type; ok is false for
// a type the table does not know (the report refuses it: a line counted
// nowhere would break opening + activity = closing).
func CategoryOf(lineType string) (Category, bool) {
	c, ok := lineCategories[lineType]
	return c, ok
}

// LineTypes lists every bill line type the table maps, entry kinds first.
func LineTypes() []string {
	out := make([]string, 0, len(lineCategories))
	for _, k := range postings.Kinds() {
		out = append(out, string(k))
	}
	return append(out, LineReceivable, LineReceivableRecovery)
}
