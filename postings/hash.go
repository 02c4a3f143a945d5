package postings

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Hash is a SHA-256 digest of the hash chain.
type Hash [sha256.Size]byte

// String renders the hash as lowercase hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// GenesisHash is the previous hash of a merchant's first entry: 32 zero bytes.
var GenesisHash Hash

// CanonicalEncoding is the byte string of a committed entry that the hash
// chain commits to, version 1 (docs/ledger.md shows the same bytes built with
// SQL). One field per line, each line ending in "\n":
//
//	GWE1
//	merchant=<merchant id>
//	seq=<merchant sequence>
//	kind=<kind>
//	ts=<created_at as microseconds since the Unix epoch>
//	card=<card token or empty>
//	tx=<transaction id or empty>
//	auth=<authorization id or empty>
//	meta=<key>=<value>            one line per pair, keys in byte order
//	posting=<source address>><destination address>:<amount in minor units>:<currency>
//	                              one line per posting, in posting order
//
// The character sets of references, metadata and addresses exclude "\n",
// "=" (in keys) and ">" so that no escaping is needed.
//
// Version 2 (GWE2) is version 1 with "GWE2" as its first line, and is the
// encoding of exactly the entries whose metadata has the pair
// facts=<version> (facts.go): they carry the economic facts audit verify
// re-derives. The version is in the bytes, so an entry cannot lose or gain
// its facts' contract without its hash changing; entries without facts are
// encoded, and verify, as they always were (docs/audit.md).
func CanonicalEncoding(r *Record) []byte {
	return AppendCanonicalEncoding(make([]byte, 0, 256+96*len(r.Postings)), r)
}

// AppendCanonicalEncoding appends CanonicalEncoding(r) to b. With a buffer
// that is reused, it allocates nothing for an entry without metadata, which
// is what lets an audit hash millions of entries without garbage.
func AppendCanonicalEncoding(b []byte, r *Record) []byte {
	if r.HasFacts() {
		b = append(b, "GWE2\n"...)
	} else {
		b = append(b, "GWE1\n"...)
	}
	b = strconv.AppendInt(append(b, "merchant="...), r.Merchant, 10)
	b = strconv.AppendInt(append(b, "\nseq="...), r.Seq, 10)
	b = append(append(b, "\nkind="...), r.Kind...)
	b = strconv.AppendInt(append(b, "\nts="...), r.CreatedAt.UnixMicro(), 10)
	b = append(append(b, "\ncard="...), r.Refs.CardNo...)
	b = append(append(b, "\ntx="...), r.Refs.TxID...)
	b = append(append(b, "\nauth="...), r.Refs.AuthID...)
	b = append(b, '\n')
	if len(r.Metadata) > 0 {
		for _, k := range r.SortedMetadataKeys() {
			b = append(append(b, "meta="...), k...)
			b = append(append(b, '='), r.Metadata[k]...)
			b = append(b, '\n')
		}
	}
	for _, p := range r.Postings {
		b = p.Source.AppendAddress(append(b, "posting="...))
		b = p.Destination.AppendAddress(append(b, '>'))
		b = strconv.AppendInt(append(b, ':'), p.Amount, 10)
		b = append(append(b, ':'), p.Currency...)
		b = append(b, '\n')
	}
	return b
}

// ChainHash returns SHA-256(prev ‖ CanonicalEncoding(r)).
func ChainHash(prev Hash, r *Record) Hash {
	h, _ := ChainHashBuffer(make([]byte, 0, len(prev)+256+96*len(r.Postings)), prev, r)
	return h
}

// ChainHashBuffer is ChainHash written into buf, whose contents it
// replaces; it returns the buffer, grown as needed, for the next entry. With
// the buffer reused it allocates nothing for an entry without metadata.
func ChainHashBuffer(buf []byte, prev Hash, r *Record) (Hash, []byte) {
	buf = AppendCanonicalEncoding(append(buf[:0], prev[:]...), r)
	return sha256.Sum256(buf), buf
}
