package postings

import "strconv"

// The bill's line types (issue 29, point 2: a bill that is the whole
// position). A bill line is one side of a posting on a billable account,
// and its type is, in general, its entry's kind. Three movements inside
// other entries get a type of their own, so that the type always says what
// the money did (docs/finance.md, "The bill is the whole position"):
//
//   - a fee: a posting into fee revenue (but an ADJUSTMENT's, a correction
//     that stays one, docs/finance.md), or the posting an entry names in
//     MetaFeePosting (the cross-border fee an authorization puts on hold),
//     is FEE;
//   - a receivable: a posting out of a card's receivable (what a capture
//     takes beyond what the card holds, lent to the card) is RECEIVABLE;
//   - its recovery: a posting into a card's receivable (a later credit of
//     the card repaying it first) is RECEIVABLE_RECOVERY.
//
// The type is a function of the journal alone (the entry's kind, its
// metadata and the posting's accounts), so audit verify recomputes it from
// the hash-chained entry and catches a line whose type was changed.
const (
	BillReceivable         Kind = "RECEIVABLE"
	BillReceivableRecovery Kind = "RECEIVABLE_RECOVERY"
)

// Metadata keys the bill reads.
const (
	// MetaFeePosting names, by its index, the posting of an entry that is a
	// fee taken inside another movement (an authorization's cross-border
	// fee, held with the amount until clearing).
	MetaFeePosting = "fee_posting"
	// MetaFeeFor is, on a FEE entry, the merchant sequence of the entry
	// the fee belongs to (the clearing's CARD_SETTLE, the remittance's
	// REMIT_OUT): the bill line's relatedTo.
	MetaFeeFor = "fee_for_seq"
)

// BillTypes lists every bill line type in a stable order: the entry kinds,
// then the types only bill lines have.
func BillTypes() []Kind {
	return append(Kinds(), BillReceivable, BillReceivableRecovery)
}

// ValidBillType reports whether k is one of BillTypes.
func (k Kind) ValidBillType() bool {
	return k.Valid() || k == BillReceivable || k == BillReceivableRecovery
}

// BillLineType is the type of both bill lines of posting i of e.
func BillLineType(e *Entry, i int) Kind {
	p := &e.Postings[i]
	switch {
	case p.Destination.Type == AccountFeeRevenue && e.Kind != KindAdjustment:
		return KindFee
	case e.Metadata[MetaFeePosting] != "" && e.Metadata[MetaFeePosting] == strconv.Itoa(i):
		return KindFee
	case p.Source.Type == AccountCardReceivable:
		return BillReceivable
	case p.Destination.Type == AccountCardReceivable:
		return BillReceivableRecovery
	}
	return e.Kind
}
