package postings

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// Limits of one entry. They bound the work of validation, the size of a
// journal row and the text that goes into the hash chain.
const (
	PostingsMax      = 16 // postings in one entry
	MetadataMax      = 16 // metadata pairs in one entry
	RefBytesMax      = 64 // card, transaction and authorization references
	metadataBytesMax = 64 // one metadata key or value
)

// Posting moves Amount minor units of Currency from Source to Destination.
type Posting struct {
	Source      Account
	Destination Account
	Amount      int64
	Currency    string
}

// Refs are the references an entry carries, so it can be found from the
// objects it belongs to.
type Refs struct {
	CardNo string // the card token
	TxID   string // a transfer or remittance id
	AuthID string // an authorization id
}

// Entry is one balanced transaction of the journal, before it is committed.
type Entry struct {
	Merchant int64
	Kind     Kind
	Postings []Posting
	Refs     Refs
	// Metadata holds facts such as the executed FX rate ("fx_rate"). Keys
	// are [a-z0-9_]; values are [A-Za-z0-9_.:/+-], so the hash encoding needs
	// no escaping.
	Metadata map[string]string
}

// Validate checks everything about an entry that does not depend on
// balances: well-formed accounts that all belong to the entry's merchant,
// positive bounded amounts, and the two rules that keep it balanced
// (docs/ledger.md, "What keeps an entry balanced"):
//
//   - each posting moves one amount in one currency, and both of its
//     accounts hold that currency. Then the posting takes from one account
//     exactly what it gives to another of the same currency, so every entry
//     made of such postings sums to zero per currency on its accounts' own
//     currencies. There is no separate sum to check: adding each posting's
//     amount to one side and taking it from the other in the posting's own
//     currency is zero whatever the postings are, and could not fail. The
//     currency of each end is what can fail, so each end is checked.
//   - an entry in more than one currency is a conversion, and each of its
//     currencies moves through the gateway's FX position account in that
//     currency: money never changes currency except against the FX position.
//
// The ledger checks it again before writing, PostgreSQL checks each
// posting's accounts a third time (postings_accounts_check), and audit
// verify recomputes the balance of every entry on its accounts' currencies.
func (e *Entry) Validate() error {
	if e.Merchant <= 0 {
		return Errorf(EINVALID, "entry without a merchant")
	}
	if !e.Kind.Valid() {
		return Errorf(EINVALID, "unknown entry kind %q", truncate(string(e.Kind), 32))
	}
	if len(e.Postings) == 0 || len(e.Postings) > PostingsMax {
		return Errorf(EINVALID, "an entry has 1 to %d postings, not %d", PostingsMax, len(e.Postings))
	}
	for _, r := range []string{e.Refs.CardNo, e.Refs.TxID, e.Refs.AuthID} {
		if r != "" && !isRefText(r) {
			return Errorf(EINVALID, "reference %q has characters outside [A-Za-z0-9_.:-] or is too long", truncate(r, RefBytesMax))
		}
	}
	if err := validateMetadata(e.Metadata); err != nil {
		return err
	}
	for i := range e.Postings {
		if err := e.Postings[i].validate(e.Merchant); err != nil {
			return err
		}
	}
	return e.validateConversion()
}

// validateConversion checks that every currency of an entry in more than
// one currency moves through its FX position account: at least one of its
// postings has that account at one end.
func (e *Entry) validateConversion() error {
	var first string
	multi := false
	for i := range e.Postings {
		if i == 0 {
			first = e.Postings[0].Currency
		} else if e.Postings[i].Currency != first {
			multi = true
		}
	}
	if !multi {
		return nil
	}
	throughFX := make(map[string]bool, 2)
	for i := range e.Postings {
		p := &e.Postings[i]
		if _, seen := throughFX[p.Currency]; !seen {
			throughFX[p.Currency] = false
		}
		if p.Source.Type == AccountFXPosition || p.Destination.Type == AccountFXPosition {
			throughFX[p.Currency] = true
		}
	}
	for _, cur := range slices.Sorted(maps.Keys(throughFX)) {
		if !throughFX[cur] {
			return Errorf(EINVALID, "an entry in several currencies moves %s without its fx_position account", cur)
		}
	}
	return nil
}

func (p *Posting) validate(merchant int64) error {
	for _, a := range []Account{p.Source, p.Destination} {
		if err := a.Validate(); err != nil {
			return err
		}
		// The messages describe an account by its type and currency,
		// never by its address: an address names internal ids (the
		// merchant's, a card's), and messages may reach a client.
		if a.Merchant != merchant {
			return Errorf(EINVALID, "a %s account of the posting does not belong to the entry's merchant", a.Type)
		}
		// Both ends, each on its own: a posting whose source and
		// destination differ in currency would create money in one
		// currency and destroy it in another.
		if a.Currency != p.Currency {
			return Errorf(EINVALID, "posting in %s touches account type %s in %s", p.Currency, a.Type, a.Currency)
		}
	}
	if p.Source == p.Destination {
		return Errorf(EINVALID, "posting from a %s account to itself", p.Source.Type)
	}
	if p.Amount <= 0 || p.Amount > AmountMinorMax {
		return Errorf(EINVALID, "posting amount %d is outside 1..%d", p.Amount, AmountMinorMax)
	}
	return nil
}

func validateMetadata(m map[string]string) error {
	if len(m) > MetadataMax {
		return Errorf(EINVALID, "more than %d metadata pairs", MetadataMax)
	}
	for k, v := range m {
		if k == "" || len(k) > metadataBytesMax || !allBytes(k, isMetaKeyByte) {
			return Errorf(EINVALID, "metadata key %q is not [a-z0-9_]{1,%d}", truncate(k, metadataBytesMax), metadataBytesMax)
		}
		if len(v) > metadataBytesMax || !allBytes(v, isMetaValueByte) {
			return Errorf(EINVALID, "metadata value for %q is not [A-Za-z0-9_.:/+-]{0,%d}", k, metadataBytesMax)
		}
	}
	return nil
}

// Record is an entry as committed to the journal.
type Record struct {
	Entry
	ID        int64     // global sequence, unique across merchants
	Seq       int64     // the merchant's sequence: 1, 2, 3, … without gaps
	CreatedAt time.Time // UTC, microsecond precision, never decreasing per merchant
	PrevHash  Hash
	Hash      Hash
}

// SortedMetadataKeys returns the metadata keys in byte order, the order of the
// hash encoding.
func (e *Entry) SortedMetadataKeys() []string {
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isRefText(s string) bool {
	return s != "" && len(s) <= RefBytesMax && allBytes(s, isRefByte)
}

// IsRefText reports whether s may be used as a reference (card token,
// transaction id, authorization id): 1 to 64 bytes of [A-Za-z0-9_.:-].
func IsRefText(s string) bool { return isRefText(s) }

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || isDigit(b)
}

func isRefByte(b byte) bool {
	return isAlnum(b) || b == '_' || b == '.' || b == ':' || b == '-'
}

func isMetaKeyByte(b byte) bool {
	return (b >= 'a' && b <= 'z') || isDigit(b) || b == '_'
}

func isMetaValueByte(b byte) bool {
	return isRefByte(b) || b == '/' || b == '+'
}
