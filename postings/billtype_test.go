package postings

import "testing"

// The type of each posting's bill lines (BillLineType): the entry's kind
// but for fees, receivables and their recovery; an ADJUSTMENT stays one.
func TestBillLineType(t *testing.T) {
	const m = 7
	fund := MerchantAccount(m, AccountFunding, "USD")
	fees := MerchantAccount(m, AccountFeeRevenue, "USD")
	settle := MerchantAccount(m, AccountNetworkSettlement, "USD")
	avail := CardAccount(m, AccountCardAvailable, "USD", "crd_1")
	held := CardAccount(m, AccountCardHeld, "USD", "crd_1")
	recv := CardAccount(m, AccountCardReceivable, "USD", "crd_1")
	post := func(src, dst Account) Posting {
		return Posting{Source: src, Destination: dst, Amount: 1, Currency: "USD"}
	}
	cases := []struct {
		name string
		e    Entry
		want []Kind // per posting
	}{
		{"a plain top-up", Entry{Kind: KindCardTransferIn, Postings: []Posting{post(fund, avail)}}, []Kind{KindCardTransferIn}},
		{"a top-up repaying a receivable", Entry{Kind: KindCardTransferIn, Postings: []Posting{post(fund, recv), post(fund, avail)}},
			[]Kind{BillReceivableRecovery, KindCardTransferIn}},
		{"an authorization with its fee", Entry{Kind: KindCardAuth, Metadata: map[string]string{MetaFeePosting: "1"},
			Postings: []Posting{post(avail, held), post(avail, held)}}, []Kind{KindCardAuth, KindFee}},
		{"an authorization without a fee", Entry{Kind: KindCardAuth, Postings: []Posting{post(avail, held)}}, []Kind{KindCardAuth}},
		{"an over-capture", Entry{Kind: KindCardSettle, Postings: []Posting{post(recv, avail), post(held, settle), post(avail, settle)}},
			[]Kind{BillReceivable, KindCardSettle, KindCardSettle}},
		{"a fee from the hold", Entry{Kind: KindFee, Postings: []Posting{post(held, fees)}}, []Kind{KindFee}},
		{"a release repaying a receivable", Entry{Kind: KindCardAuthRelease, Postings: []Posting{post(held, recv), post(held, avail)}},
			[]Kind{BillReceivableRecovery, KindCardAuthRelease}},
		{"a correction into fee revenue", Entry{Kind: KindAdjustment, Postings: []Posting{post(fund, fees)}}, []Kind{KindAdjustment}},
		{"a fee refund", Entry{Kind: KindFeeRefund, Postings: []Posting{post(fees, fund)}}, []Kind{KindFeeRefund}},
	}
	for _, tc := range cases {
		for i, want := range tc.want {
			if got := BillLineType(&tc.e, i); got != want {
				t.Errorf("%s, posting %d: %s, want %s", tc.name, i, got, want)
			}
		}
	}
	for _, k := range BillTypes() {
		if !k.ValidBillType() {
			t.Errorf("%s is not a valid bill type", k)
		}
	}
	if Kind("RECEIVABLE").Valid() || !Kind("RECEIVABLE").ValidBillType() || Kind("BOGUS").ValidBillType() {
		t.Error("RECEIVABLE is a bill type and not an entry kind; BOGUS neither")
	}
}
