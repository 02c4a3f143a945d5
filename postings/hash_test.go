package postings

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"
)

func hashTestRecords() []*Record {
	return []*Record{
		{Entry: Entry{Merchant: 7, Kind: KindDeposit, Postings: []Posting{
			{Source: MerchantAccount(7, AccountWorld, "USD"), Destination: funding(7, "USD"), Amount: 1, Currency: "USD"},
		}}, Seq: 1, CreatedAt: time.Unix(0, 0).UTC()},
		{Entry: Entry{Merchant: 1234567890123, Kind: KindCardAuth, Refs: Refs{CardNo: "crd_a", TxID: "t", AuthID: "au_1"},
			Metadata: map[string]string{"z": "1", "a": "b=c", "m": ""},
			Postings: []Posting{
				{Source: CardAccount(1234567890123, AccountCardAvailable, "EUR", "crd_a"), Destination: CardAccount(1234567890123, AccountCardHeld, "EUR", "crd_a"), Amount: 999_999_999_999, Currency: "EUR"},
				{Source: funding(1234567890123, "EUR"), Destination: MerchantAccount(1234567890123, AccountFeeRevenue, "EUR"), Amount: 5, Currency: "EUR"},
			}}, Seq: 98765, CreatedAt: time.Date(2031, 1, 2, 3, 4, 5, 678_000, time.UTC)},
		{Entry: Entry{Merchant: 2, Kind: KindAdjustment}, Seq: 3, CreatedAt: time.Date(1969, 12, 31, 23, 59, 59, 1000, time.UTC)},
	}
}

// The append form is the same bytes as CanonicalEncoding after whatever the
// buffer held, and the buffered hash is the same hash as ChainHash.
func TestAppendCanonicalEncodingIsCanonicalEncoding(t *testing.T) {
	prev := Hash{1, 2, 3}
	var buf []byte
	for _, r := range hashTestRecords() {
		got := AppendCanonicalEncoding([]byte("prefix"), r)
		if want := append([]byte("prefix"), CanonicalEncoding(r)...); !bytes.Equal(got, want) {
			t.Errorf("AppendCanonicalEncoding:\n%q\nwant\n%q", got, want)
		}
		var h Hash
		h, buf = ChainHashBuffer(buf, prev, r)
		if want := sha256.Sum256(append(prev[:], CanonicalEncoding(r)...)); h != want || ChainHash(prev, r) != want {
			t.Errorf("ChainHashBuffer = %s, ChainHash = %s, want %s", h, ChainHash(prev, r), Hash(want))
		}
		for _, p := range r.Postings {
			for _, a := range []Account{p.Source, p.Destination} {
				if got := string(a.AppendAddress([]byte("x"))); got != "x"+a.Address() {
					t.Errorf("AppendAddress = %q, want x%s", got, a.Address())
				}
			}
		}
	}
}

// Hashing with a reused buffer allocates nothing for an entry without
// metadata: what an audit of millions of entries relies on.
func TestChainHashBufferAllocatesNothing(t *testing.T) {
	r := hashTestRecords()[0]
	buf := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		_, buf = ChainHashBuffer(buf, GenesisHash, r)
	})
	if allocs != 0 {
		t.Fatalf("ChainHashBuffer allocates %.1f times per entry", allocs)
	}
}
