package cards

import "github.com/paygate/gateway/postings"

func errCardNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonCard, "card not found")
}

func errCardCancelled() error {
	return postings.ReasonErrorf(postings.ESTATE, postings.ReasonCardCancelled, "the card is cancelled")
}

func errCardFrozen() error {
	return postings.ReasonErrorf(postings.ESTATE, postings.ReasonCardFrozen, "the card is frozen")
}

func errNotMerchantCurrency(currency string) error {
	return postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonCurrency, "%s is not one of the merchant's currencies", currency)
}
