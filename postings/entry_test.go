package postings

import (
	"math/rand/v2"
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
		// Each end on its own (issue 17, point 14): the other end and the
		// posting agree, so only the check of this end can refuse it.
		{"source in another currency", func(e *Entry) { e.Postings[0].Source = funding(7, "EUR") },
			"posting in USD touches account type funding in EUR"},
		{"destination in another currency", func(e *Entry) {
			e.Postings[0].Destination = CardAccount(7, AccountCardAvailable, "EUR", "crd_abc")
		}, "posting in USD touches account type card_available in EUR"},
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

// TestEntryInSeveralCurrenciesGoesThroughFX: each currency of a conversion
// moves through its FX position account.
func TestEntryInSeveralCurrenciesGoesThroughFX(t *testing.T) {
	leg := func(src, dst Account) Posting {
		return Posting{Source: src, Destination: dst, Amount: 100, Currency: src.Currency}
	}
	fxUSD, fxEUR := MerchantAccount(7, AccountFXPosition, "USD"), MerchantAccount(7, AccountFXPosition, "EUR")
	card := CardAccount(7, AccountCardAvailable, "EUR", "crd_e")
	tests := []struct {
		name     string
		postings []Posting
		ok       bool
	}{
		{"both legs through FX", []Posting{leg(funding(7, "USD"), fxUSD), leg(fxEUR, card)}, true},
		{"out through FX", []Posting{leg(card, fxEUR), leg(fxUSD, funding(7, "USD"))}, true},
		{"a third posting beside the FX legs", []Posting{leg(funding(7, "USD"), fxUSD), leg(fxEUR, card),
			leg(funding(7, "EUR"), MerchantAccount(7, AccountFeeRevenue, "EUR"))}, true},
		{"USD not through FX", []Posting{leg(funding(7, "USD"), MerchantAccount(7, AccountWorld, "USD")), leg(fxEUR, card)}, false},
		{"EUR not through FX", []Posting{leg(funding(7, "USD"), fxUSD), leg(funding(7, "EUR"), card)}, false},
		{"one currency needs no FX", []Posting{leg(funding(7, "EUR"), card)}, true},
	}
	for _, tt := range tests {
		e := Entry{Merchant: 7, Kind: KindFX, Postings: tt.postings}
		err := e.Validate()
		if tt.ok != (err == nil) {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "fx_position") {
			t.Errorf("%s: %v does not name the FX position", tt.name, err)
		}
	}
}

// TestValidEntriesBalanceOnTheirAccounts is what keeps an entry balanced,
// stated as a property: over random entries (random accounts, currencies
// and amounts), every entry that Validate accepts moves, per currency of
// its accounts, as much out of accounts as into them. Dropping the
// currency check of either end of a posting makes it fail.
func TestValidEntriesBalanceOnTheirAccounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t, 13), 14))
	curs := []string{"USD", "EUR", "JPY"}
	types := []AccountType{AccountFunding, AccountCardAvailable, AccountFXPosition, AccountWorld, AccountFeeRevenue}
	account := func() Account {
		a := MerchantAccount(7, types[rng.IntN(len(types))], curs[rng.IntN(len(curs))])
		if a.Type.PerCard() {
			a.Card = "crd_x"
		}
		return a
	}
	accepted := 0
	for i := 0; i < runs(200_000); i++ {
		e := Entry{Merchant: 7, Kind: KindFX}
		for n := 1 + rng.IntN(3); n > 0; n-- {
			src, dst := account(), account()
			cur := src.Currency
			if rng.IntN(2) == 0 {
				cur = dst.Currency
			}
			e.Postings = append(e.Postings, Posting{Source: src, Destination: dst, Amount: 1 + rng.Int64N(1000), Currency: cur})
		}
		if e.Validate() != nil {
			continue
		}
		accepted++
		net := map[string]int64{}
		for _, p := range e.Postings {
			net[p.Source.Currency] -= p.Amount
			net[p.Destination.Currency] += p.Amount
		}
		for cur, v := range net {
			if v != 0 {
				t.Fatalf("accepted entry %+v nets %d in %s on its accounts", e.Postings, v, cur)
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d random entries were valid: the property was hardly tested", accepted)
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
