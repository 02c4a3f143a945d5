package postings

import (
	"strings"
	"testing"
	"time"
)

func funding(m int64, cur string) Account { return MerchantAccount(m, AccountFunding, cur) }

func TestEntryValidate(t *testing.T) {
	card := CardAccount(7, AccountCardAvailable, "USD", "crd_abc")
	ok := Entry{Merchant: 7, Kind: KindCardFund, Postings: []Posting{
		{Source: funding(7, "USD"), Destination: card, Amount: 100, Currency: "USD"},
	}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid entry refused: %v", err)
	}
	fx := Entry{Merchant: 7, Kind: KindCardTransferIn, Postings: []Posting{
		{Source: funding(7, "USD"), Destination: MerchantAccount(7, AccountFXPosition, "USD"), Amount: 10000, Currency: "USD"},
		{Source: MerchantAccount(7, AccountFXPosition, "EUR"), Destination: CardAccount(7, AccountCardAvailable, "EUR", "crd_e"), Amount: 9200, Currency: "EUR"},
	}, Metadata: map[string]string{"fx_rate": "0.92", "fx_pair": "USD/EUR"}}
	if err := fx.Validate(); err != nil {
		t.Fatalf("valid FX entry refused: %v", err)
	}

	tests := []struct {
		name   string
		mutate func(e *Entry)
		want   string
	}{
		{"no merchant", func(e *Entry) { e.Merchant = 0 }, "without a merchant"},
		{"unknown kind", func(e *Entry) { e.Kind = "GIFT" }, "unknown entry kind"},
		{"no postings", func(e *Entry) { e.Postings = nil }, "1 to 16 postings"},
		{"zero amount", func(e *Entry) { e.Postings[0].Amount = 0 }, "outside 1.."},
		{"negative amount", func(e *Entry) { e.Postings[0].Amount = -5 }, "outside 1.."},
		{"huge amount", func(e *Entry) { e.Postings[0].Amount = AmountMinorMax + 1 }, "outside 1.."},
		{"currency mismatch", func(e *Entry) { e.Postings[0].Currency = "EUR" }, "touches account"},
		{"foreign account", func(e *Entry) { e.Postings[0].Source.Merchant = 8 }, "does not belong"},
		{"self posting", func(e *Entry) { e.Postings[0].Destination = e.Postings[0].Source }, "to itself"},
		{"card account without card", func(e *Entry) { e.Postings[0].Destination.Card = "" }, "disagree"},
		{"bad card ref", func(e *Entry) {
			e.Postings[0].Destination.Card = "crd\nx"
		}, "characters outside"},
		{"bad ref", func(e *Entry) { e.Refs.TxID = "tx id" }, "characters outside"},
		{"bad metadata key", func(e *Entry) { e.Metadata = map[string]string{"Rate": "1"} }, "metadata key"},
		{"bad metadata value", func(e *Entry) { e.Metadata = map[string]string{"rate": "1\n2"} }, "metadata value"},
		{"too many postings", func(e *Entry) {
			for len(e.Postings) <= PostingsMax {
				e.Postings = append(e.Postings, e.Postings[0])
			}
		}, "1 to 16 postings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ok
			e.Postings = append([]Posting(nil), ok.Postings...)
			tt.mutate(&e)
			err := e.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCanonicalEncodingAndHash(t *testing.T) {
	r := &Record{
		Entry: Entry{Merchant: 3, Kind: KindCardTransferIn, Refs: Refs{CardNo: "crd_x", TxID: "tr_1"},
			Metadata: map[string]string{"fx_rate": "0.92", "fx_pair": "USD/EUR"},
			Postings: []Posting{
				{Source: funding(3, "USD"), Destination: MerchantAccount(3, AccountFXPosition, "USD"), Amount: 100, Currency: "USD"},
				{Source: MerchantAccount(3, AccountFXPosition, "EUR"), Destination: CardAccount(3, AccountCardAvailable, "EUR", "crd_x"), Amount: 92, Currency: "EUR"},
			}},
		Seq:       5,
		CreatedAt: time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC),
	}
	want := "GWE1\nmerchant=3\nseq=5\nkind=CARD_TRANSFER_IN\nts=1795341600123456\ncard=crd_x\ntx=tr_1\nauth=\n" +
		"meta=fx_pair=USD/EUR\nmeta=fx_rate=0.92\n" +
		"posting=m:3:funding:USD>m:3:fx_position:USD:100:USD\n" +
		"posting=m:3:fx_position:EUR>m:3:card_available:EUR:crd_x:92:EUR\n"
	if got := string(CanonicalEncoding(r)); got != want {
		t.Fatalf("CanonicalEncoding:\n%s\nwant:\n%s", got, want)
	}
	h1 := ChainHash(GenesisHash, r)
	r.Postings[1].Amount = 93
	if ChainHash(GenesisHash, r) == h1 {
		t.Fatal("changing an amount did not change the hash")
	}
	r.Postings[1].Amount = 92
	if ChainHash(h1, r) == h1 || ChainHash(GenesisHash, r) != h1 {
		t.Fatal("the hash does not depend on exactly the previous hash and the entry")
	}
}
