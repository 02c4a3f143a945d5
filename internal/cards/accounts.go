package cards

import "github.com/paygate/gateway/postings"

// The accounts of a card (docs/ledger.md, "Chart of accounts").

// AvailableAccount is what the card can spend (the spec's card balance).
func AvailableAccount(merchant int64, currency, cardNo string) postings.Account {
	return postings.CardAccount(merchant, postings.AccountCardAvailable, currency, cardNo)
}

// HeldAccount is the amount of the card's open authorizations.
func HeldAccount(merchant int64, currency, cardNo string) postings.Account {
	return postings.CardAccount(merchant, postings.AccountCardHeld, currency, cardNo)
}

// ReceivableAccount is what the card owes (zero or negative).
func ReceivableAccount(merchant int64, currency, cardNo string) postings.Account {
	return postings.CardAccount(merchant, postings.AccountCardReceivable, currency, cardNo)
}

// FundingAccount is the merchant's funding account in currency.
func FundingAccount(merchant int64, currency string) postings.Account {
	return postings.MerchantAccount(merchant, postings.AccountFunding, currency)
}
