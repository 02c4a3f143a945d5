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
func CanonicalEncoding(r *Record) []byte {
	b := make([]byte, 0, 256+96*len(r.Postings))
	line := func(name, value string) {
		b = append(b, name...)
		b = append(b, '=')
		b = append(b, value...)
		b = append(b, '\n')
	}
	b = append(b, "GWE1\n"...)
	line("merchant", strconv.FormatInt(r.Merchant, 10))
	line("seq", strconv.FormatInt(r.Seq, 10))
	line("kind", string(r.Kind))
	line("ts", strconv.FormatInt(r.CreatedAt.UnixMicro(), 10))
	line("card", r.Refs.CardNo)
	line("tx", r.Refs.TxID)
	line("auth", r.Refs.AuthID)
	for _, k := range r.SortedMetadataKeys() {
		line("meta", k+"="+r.Metadata[k])
	}
	for _, p := range r.Postings {
		line("posting", p.Source.Address()+">"+p.Destination.Address()+":"+
			strconv.FormatInt(p.Amount, 10)+":"+p.Currency)
	}
	return b
}

// ChainHash returns SHA-256(prev ‖ CanonicalEncoding(r)).
func ChainHash(prev Hash, r *Record) Hash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(CanonicalEncoding(r))
	var out Hash
	h.Sum(out[:0])
	return out
}
