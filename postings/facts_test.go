package postings

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// authWithFacts is the CARD_AUTH of 100.00 EUR on a USD card at 1.087,
// with the facts the network records.
func authWithFacts(t *testing.T) Entry {
	t.Helper()
	h, err := NewHold(100_01, MustCurrency("EUR"), MustCurrency("USD"), MustRate("1.087"))
	if err != nil {
		t.Fatal(err)
	}
	fx, fee := h.Facts(7, time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.UTC))
	return Entry{Merchant: 3, Kind: KindCardAuth, Refs: Refs{CardNo: "crd_x", AuthID: "auth_x"},
		Metadata: PutFacts(nil, &fx, &fee),
		Postings: []Posting{{Source: CardAccount(3, AccountCardAvailable, "USD", "crd_x"),
			Destination: CardAccount(3, AccountCardHeld, "USD", "crd_x"), Amount: h.Amount + h.Fee, Currency: "USD"}}}
}

// remittanceFee is the FEE of a remittance of 1,000.00 EUR at 10 bps plus
// 0.50 EUR.
func remittanceFee(t *testing.T) Entry {
	t.Helper()
	fee, err := NewFeeFact(FeeRuleRemittance, "corridor:DE:EUR", 1000_00, 10, 50)
	if err != nil || fee.Amount != 150 {
		t.Fatalf("fee %+v, %v, want 150", fee, err)
	}
	return Entry{Merchant: 3, Kind: KindFee, Refs: Refs{TxID: "rmt_x"}, Metadata: PutFacts(map[string]string{"fee": "remittance"}, nil, &fee),
		Postings: []Posting{{Source: funding(3, "EUR"), Destination: MerchantAccount(3, AccountFeeRevenue, "EUR"), Amount: 150, Currency: "EUR"}}}
}

// transferIn is a CARD_TRANSFER_IN of ¥12,345 from JPY funding to a KWD
// card at 0.00204 with 50 bps of spread, rounded down: 0-decimal to
// 3-decimal, as internal/cards records it.
func transferIn(t *testing.T) Entry {
	t.Helper()
	fx, err := NewFXFact(12345, MustCurrency("JPY"), MustCurrency("KWD"), MustRate("0.00204"), 50, 9,
		time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), RoundDown)
	// 12345 × 0.00204 × 0.995 = 25.0578… KWD: 25057 fils, down.
	if err != nil || fx.Amount != 25057 {
		t.Fatalf("fact %+v, %v, want 25057 fils", fx, err)
	}
	return transferEntry(KindCardTransferIn, fx, funding(3, "JPY"), CardAccount(3, AccountCardAvailable, "KWD", "crd_x"))
}

// transferOut is a CARD_TRANSFER_OUT that pays ¥12,345 into JPY funding
// from a KWD card at 489.5 JPY per KWD with 50 bps of spread: the card
// pays 12345 / (489.5 × 0.995) = 25.3464… KWD, rounded up to 25347 fils.
func transferOut(t *testing.T) Entry {
	t.Helper()
	fx, err := NewInverseFXFact(12345, MustCurrency("KWD"), MustCurrency("JPY"), MustRate("489.5"), 50, 9,
		time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), RoundUp)
	if err != nil || fx.FromAmount != 25347 {
		t.Fatalf("fact %+v, %v, want 25347 fils", fx, err)
	}
	return transferEntry(KindCardTransferOut, fx, CardAccount(3, AccountCardAvailable, "KWD", "crd_x"), funding(3, "JPY"))
}

// transferEntry is a transfer of fx from src to dst through the FX
// position, with fx's facts.
func transferEntry(kind Kind, fx FXFact, src, dst Account) Entry {
	client, _ := fx.ClientRate()
	return Entry{Merchant: 3, Kind: kind, Refs: Refs{CardNo: "crd_x", TxID: "trf_x"},
		Metadata: PutFacts(map[string]string{MetaFXClientRate: client.String()}, &fx, nil),
		Postings: []Posting{
			{Source: src, Destination: MerchantAccount(3, AccountFXPosition, fx.From.Code), Amount: fx.FromAmount, Currency: fx.From.Code},
			{Source: MerchantAccount(3, AccountFXPosition, fx.To.Code), Destination: dst, Amount: fx.Amount, Currency: fx.To.Code}}}
}

// The facts re-derive exactly what was written, and each way of making
// them disagree with themselves or with the postings is named.
func TestCheckFacts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		entry func(*testing.T) Entry
		set   map[string]string // metadata changed (a value "" deletes the key)
		post  int64             // added to the first posting's amount
		want  string            // the check named, "" for none
	}{
		{name: "auth as written", entry: authWithFacts},
		{name: "remittance fee as written", entry: remittanceFee},
		{name: "auth converted amount", entry: authWithFacts, set: map[string]string{MetaFXAmount: "10871"}, want: FactCheckFX},
		{name: "auth rate", entry: authWithFacts, set: map[string]string{MetaFXMidRate: "1.09"}, want: FactCheckFX},
		{name: "auth spread", entry: authWithFacts, set: map[string]string{MetaFXSpreadBps: "50"}, want: FactCheckFX},
		{name: "auth rounding", entry: authWithFacts, set: map[string]string{MetaFXRound: "down"}, want: FactCheckFX},
		{name: "auth held amount", entry: authWithFacts, post: 1, want: FactCheckFX},
		{name: "auth fee", entry: authWithFacts, set: map[string]string{MetaFeeAmount: "163"}, want: FactCheckFee},
		{name: "auth fee basis points", entry: authWithFacts, set: map[string]string{MetaFeeBps: "100"}, want: FactCheckFee},
		{name: "auth rate version missing", entry: authWithFacts, set: map[string]string{MetaFXRateVersion: ""}, want: FactCheckFacts},
		{name: "auth rate time unreadable", entry: authWithFacts, set: map[string]string{MetaFXRateAt: "yesterday"}, want: FactCheckFacts},
		{name: "unknown facts version", entry: authWithFacts, set: map[string]string{MetaFacts: "9"}, want: FactCheckFacts},
		{name: "remittance fee amount", entry: remittanceFee, set: map[string]string{MetaFeeAmount: "149"}, want: FactCheckFee},
		{name: "remittance fee fixed part", entry: remittanceFee, set: map[string]string{MetaFeeFixed: "0"}, want: FactCheckFee},
		{name: "remittance fee posted", entry: remittanceFee, post: -1, want: FactCheckFee},
		{name: "remittance fee rule missing", entry: remittanceFee, set: map[string]string{MetaFeeRule: ""}, want: FactCheckFacts},
		{name: "transfer in as written", entry: transferIn},
		{name: "transfer out as written", entry: transferOut},
		{name: "transfer in converted amount", entry: transferIn, set: map[string]string{MetaFXAmount: "25058"}, want: FactCheckFX},
		{name: "transfer in spread", entry: transferIn, set: map[string]string{MetaFXSpreadBps: "0"}, want: FactCheckFX},
		{name: "transfer in paid amount", entry: transferIn, post: 1, want: FactCheckFX},
		{name: "transfer in read as inverse", entry: transferIn, set: map[string]string{MetaFXInverse: "1"}, want: FactCheckFX},
		{name: "transfer out card amount", entry: transferOut, set: map[string]string{MetaFXFromAmount: "25346"}, want: FactCheckFX},
		{name: "transfer out rounding", entry: transferOut, set: map[string]string{MetaFXRound: "down"}, want: FactCheckFX},
		{name: "transfer out card paid", entry: transferOut, post: -1, want: FactCheckFX},
		{name: "transfer out read as forward", entry: transferOut, set: map[string]string{MetaFXInverse: ""}, want: FactCheckFX},
		{name: "transfer in client rate", entry: transferIn, set: map[string]string{MetaFXClientRate: "0.00204"}, want: FactCheckFX},
		{name: "transfer out client rate unreadable", entry: transferOut, set: map[string]string{MetaFXClientRate: "x"}, want: FactCheckFX},
		{name: "transfer out inverse unreadable", entry: transferOut, set: map[string]string{MetaFXInverse: "yes"}, want: FactCheckFacts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.entry(t)
			if err := e.Validate(); err != nil {
				t.Fatalf("the entry as written is invalid: %v", err)
			}
			for k, v := range tt.set {
				if v == "" {
					delete(e.Metadata, k)
				} else {
					e.Metadata[k] = v
				}
			}
			e.Postings[0].Amount += tt.post
			got := e.CheckFacts()
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("breaks in facts as written: %v", got)
				}
				return
			}
			found := false
			for _, b := range got {
				found = found || b.Check == tt.want
			}
			if !found {
				t.Fatalf("breaks %v, want one named %s", got, tt.want)
			}
		})
	}
}

// The network's facts fit an entry's metadata (16 pairs of 64 bytes), and
// a clearing's share of the fee records its rule without a basis.
func TestFactsFitTheMetadata(t *testing.T) {
	e := authWithFacts(t)
	if len(e.Metadata) > MetadataMax {
		t.Fatalf("%d metadata pairs", len(e.Metadata))
	}
	if e.Metadata[MetaFXRateAt] != "2026-11-27T09:00:00.123456Z" || e.Metadata[MetaFXAmount] != "10872" || e.Metadata[MetaFeeAmount] != "164" {
		t.Fatalf("facts %v", e.Metadata)
	}
	share := CapturedFeeFact(41)
	fee := Entry{Merchant: 3, Kind: KindFee, Metadata: PutFacts(nil, nil, &share),
		Postings: []Posting{{Source: CardAccount(3, AccountCardHeld, "USD", "crd_x"), Destination: MerchantAccount(3, AccountFeeRevenue, "USD"), Amount: 41, Currency: "USD"}}}
	if _, has := fee.Metadata[MetaFeeBasis]; has || len(fee.CheckFacts()) != 0 {
		t.Fatalf("a captured share: %v, %v", fee.Metadata, fee.CheckFacts())
	}
	fee.Postings[0].Amount = 40
	if b := fee.CheckFacts(); len(b) != 1 || b[0].Check != FactCheckFee {
		t.Fatalf("a captured share moved other than its amount: %v", b)
	}
}

// An entry with facts is encoded as GWE2, one without as GWE1, byte for
// byte as before: old entries keep their hashes.
func TestCanonicalEncodingVersions(t *testing.T) {
	e := authWithFacts(t)
	r := &Record{Entry: e, Seq: 4, CreatedAt: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	withFacts := string(CanonicalEncoding(r))
	if !strings.HasPrefix(withFacts, "GWE2\nmerchant=3\nseq=4\n") || !strings.Contains(withFacts, "\nmeta=facts=1\n") {
		t.Fatalf("with facts:\n%s", withFacts)
	}
	r.Metadata = maps.Clone(e.Metadata)
	delete(r.Metadata, MetaFacts)
	without := string(CanonicalEncoding(r))
	if !strings.HasPrefix(without, "GWE1\n") || without[4:] != strings.Replace(withFacts[4:], "meta=facts=1\n", "", 1) {
		t.Fatalf("without facts:\n%s", without)
	}
	if ChainHash(GenesisHash, r) == ChainHash(GenesisHash, &Record{Entry: e, Seq: 4, CreatedAt: r.CreatedAt}) {
		t.Fatal("dropping the facts' version kept the hash")
	}
}

// FuzzCheckFacts: whatever the metadata of an entry says, reading and
// re-deriving its facts never panics, and facts that re-derive are the
// ones the constructors would have written.
func FuzzCheckFacts(f *testing.F) {
	f.Add("EUR/USD", "1.087", "0", "10000", "10870", "up", "10870", "150", "0", "164")
	f.Add("JPY/KWD", "0.002", "50", "1", "1", "down", "-1", "x", "", "0")
	f.Fuzz(func(t *testing.T, pair, mid, spread, from, amount, round, basis, bps, fixed, fee string) {
		e := Entry{Merchant: 1, Kind: KindCardAuth, Metadata: map[string]string{MetaFacts: FactsVersion,
			MetaFXPair: pair, MetaFXMidRate: mid, MetaFXSpreadBps: spread, MetaFXFromAmount: from, MetaFXAmount: amount,
			MetaFXRound: round, MetaFXRateVersion: "1", MetaFXRateAt: "2026-11-27T09:00:00.000000Z",
			MetaFee: FeeRuleCrossBorder, MetaFeeRule: "v1", MetaFeeBasis: basis, MetaFeeBps: bps, MetaFeeFixed: fixed, MetaFeeAmount: fee}}
		breaks := e.CheckFacts()
		fx, hasFX, errFX := e.FX()
		if !hasFX {
			t.Fatal("a pair without a conversion")
		}
		if errFX == nil {
			if got, err := fx.derive(); err == nil && got == fx.Amount {
				for _, b := range breaks {
					if b.Check == FactCheckFX && !strings.Contains(b.Detail, "the entry holds") {
						t.Fatalf("a conversion that re-derives was reported: %v", b)
					}
				}
			}
		}
	})
}
