package postings

// Kind is the type of a journal entry. The bill export shows it as the type
// of each movement; docs/ledger.md lists the postings of each kind.
type Kind string

// The complete list of entry kinds.
const (
	// DEPOSIT: money arrives from the merchant's bank (world → funding).
	KindDeposit Kind = "DEPOSIT"
	// CARD_FUND: the initial funding of a new card (funding → card available).
	KindCardFund Kind = "CARD_FUND"
	// CARD_TRANSFER_IN: a top-up (funding → card available; across currencies
	// through the FX position accounts).
	KindCardTransferIn Kind = "CARD_TRANSFER_IN"
	// CARD_TRANSFER_OUT: a withdrawal (card available → funding).
	KindCardTransferOut Kind = "CARD_TRANSFER_OUT"
	// CARD_CANCEL_REFUND: the available balance of a cancelled card goes back
	// to the funding account.
	KindCardCancelRefund Kind = "CARD_CANCEL_REFUND"
	// CARD_AUTH: an approved authorization moves the amount into a hold
	// (card available → card held).
	KindCardAuth Kind = "CARD_AUTH"
	// CARD_AUTH_RELEASE: a hold is released, at clearing (the part not
	// captured) or at expiry (card held → card available, or → funding for a
	// cancelled card).
	KindCardAuthRelease Kind = "CARD_AUTH_RELEASE"
	// CARD_SETTLE: a capture pays the network (card available → network
	// settlement; what the card lacks comes from its receivable).
	KindCardSettle Kind = "CARD_SETTLE"
	// CARD_REFUND: a merchant refund from the network (network settlement →
	// card available, or → funding for a cancelled card).
	KindCardRefund Kind = "CARD_REFUND"
	// REVERSAL: the network reverses an authorization, fully or partly (card
	// held → card available, or → funding for a cancelled card).
	KindReversal Kind = "REVERSAL"
	// REMIT_OUT: a remittance is debited (funding → remittance in flight).
	KindRemitOut Kind = "REMIT_OUT"
	// REMIT_SETTLE: the rail confirms payment (remittance in flight → rail
	// settlement). The merchant's accounts do not move, so it is not in the
	// bill.
	KindRemitSettle Kind = "REMIT_SETTLE"
	// REMIT_RETURN: a remittance comes back, or is rejected by screening
	// (remittance in flight → funding).
	KindRemitReturn Kind = "REMIT_RETURN"
	// FEE: a fee (funding or card available → fee revenue).
	KindFee Kind = "FEE"
	// FEE_REFUND: a fee given back (fee revenue → funding).
	KindFeeRefund Kind = "FEE_REFUND"
	// FX: a conversion between two of the merchant's funding accounts.
	KindFX Kind = "FX"
	// ADJUSTMENT: an operator's correction, the exact opposite of an earlier
	// entry; the journal is never edited.
	KindAdjustment Kind = "ADJUSTMENT"
)

// Kinds lists every kind in a stable order.
func Kinds() []Kind {
	return []Kind{
		KindDeposit, KindCardFund, KindCardTransferIn, KindCardTransferOut,
		KindCardCancelRefund, KindCardAuth, KindCardAuthRelease, KindCardSettle,
		KindCardRefund, KindReversal, KindRemitOut, KindRemitSettle, KindRemitReturn,
		KindFee, KindFeeRefund, KindFX, KindAdjustment,
	}
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds() {
		if v == k {
			return true
		}
	}
	return false
}
