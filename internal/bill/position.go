package bill

import "github.com/paygate/gateway/postings"

// The bill is the whole position (issue 29, point 2; docs/finance.md): its
// lines are the movements of every account of the merchant's money — each
// funding account, and each card's available balance, held funds and
// receivable — typed by what the money did (postings.BillLineType). This
// file names those accounts for the exports and finds what a fee belongs
// to.

// relatedToJoin is the lateral probe of entries_pkey that gives a FEE line
// its relatedTo: the entry's own sequence when the fee is a posting inside
// another movement (an authorization's cross-border fee), else the
// sequence the FEE entry names (postings.MetaFeeFor: a clearing's fee, a
// remittance fee). Lines of other types skip the probe. The value is
// checked to be digits so that a malformed one reads as none, not as a
// failed cast. It reads the journal, which the hash chain protects: no
// column of bill_lines had to be added or back-filled.
const relatedToJoin = `left join lateral (
		select case when e.kind <> 'FEE' then e.merchant_seq
		            when e.metadata->>'` + postings.MetaFeeFor + `' ~ '^[0-9]{1,18}$'
		            then (e.metadata->>'` + postings.MetaFeeFor + `')::bigint end as related_to
		from entries e
		where b.kind = 'FEE' and e.merchant_id = b.merchant_id and e.merchant_seq = b.merchant_seq
		offset 0) r on true`

// Export names of the accounts (the bill's `account` and `accountType`).
const (
	// FundingName is `account` for a funding account.
	FundingName = "FUNDING"
	heldPrefix  = "HELD:"
	recvPrefix  = "RECEIVABLE:"
)

// AccountName is the line's `account` in the exports: FUNDING, the card
// token for a card's available balance (as before), HELD:<card> for its
// held funds and RECEIVABLE:<card> for its receivable — one name per
// account, so that "balanceAfter is the previous line's plus amount" holds
// per `account`.
func (l *Line) AccountName() string {
	switch l.AccountType {
	case postings.AccountFunding:
		return FundingName
	case postings.AccountCardHeld:
		return heldPrefix + l.Account
	case postings.AccountCardReceivable:
		return recvPrefix + l.Account
	}
	if l.Account == AccountFunding { // a Line built without its type
		return FundingName
	}
	return l.Account
}

// AccountTypeName is the line's `accountType` in the exports: FUNDING,
// AVAILABLE, HELD or RECEIVABLE.
func (l *Line) AccountTypeName() string {
	switch l.AccountType {
	case postings.AccountCardHeld:
		return "HELD"
	case postings.AccountCardReceivable:
		return "RECEIVABLE"
	case postings.AccountCardAvailable:
		return "AVAILABLE"
	}
	if l.Account == AccountFunding {
		return FundingName
	}
	return "AVAILABLE"
}
