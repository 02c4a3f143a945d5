package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/internal/audit/seal"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Verify recomputes every closed period from the journal as the stream
// goes by (close.go): for a merchant with closes, each posting is folded
// into its account's balance, and at each close's head entry the fold is
// compared with the balances the close recorded, and the entry's hash with
// its head. An entry after a close's head created before its end would be
// a back-dated entry. The close's statement and, with a public key, its
// signature are checked when it is loaded.

// loadClosesSQL reads the closes, by merchant and head (the period key's
// index for one merchant).
const loadClosesSQL = `
	select merchant_id, period_kind, period_start, period_end, closed_at, head_seq, head_hash, balances, key_id, signed, signature
	from audit_period_closes where %[1]d = 0 or merchant_id = %[1]d
	order by merchant_id, head_seq, period_end`

// storedClose is one row of audit_period_closes, read for the stream.
type storedClose struct {
	PeriodClose
	balances map[string]int64
}

func (c *storedClose) label() string { return fmt.Sprintf("the closed %s %s", c.Kind, c.Start) }

// closeFollower checks the stream against the closes.
type closeFollower struct {
	byMerchant map[int64][]*storedClose // the merchants not reached yet
	cur        []*storedClose           // the streamed merchant's, by head
	next       int                      // the next of cur to reach
	fold       map[postings.Account]int64
	sealed     *storedClose // the reached close with the latest end
	problems   problemList
}

// loadCloses reads the closes of merchant (0: all) and checks each one's
// statement and, when pub is given, its signature. nil when there is none.
func loadCloses(ctx context.Context, conn *pgx.Conn, merchant int64, pub ed25519.PublicKey) (*closeFollower, error) {
	rows, err := conn.Query(ctx, fmt.Sprintf(loadClosesSQL, merchant))
	if err != nil {
		return nil, ledger.MapError(err)
	}
	defer rows.Close()
	f := &closeFollower{byMerchant: map[int64][]*storedClose{}, fold: map[postings.Account]int64{}}
	for rows.Next() {
		c := &storedClose{}
		var start, end, closed time.Time
		var hash, balances, signed, sig []byte
		if err := rows.Scan(&c.Merchant, &c.Kind, &start, &end, &closed, &c.HeadSeq, &hash, &balances, &c.KeyID, &signed, &sig); err != nil {
			return nil, ledger.MapError(err)
		}
		c.Start = start.Format("2006-01-02")
		if c.Kind == PeriodMonth {
			c.Start = start.Format("2006-01")
		}
		c.End, c.ClosedAt, c.HeadHash = Stamp{end.UTC()}, Stamp{closed.UTC()}, hex.EncodeToString(hash)
		c.Signature = hex.EncodeToString(sig)
		c.balances = map[string]int64{}
		if err := json.Unmarshal(balances, &c.Balances); err != nil {
			f.bad(c, "its balances are not a list of accounts and balances")
		}
		for _, b := range c.Balances {
			c.balances[b.Account] = b.Balance
		}
		f.checkSigned(c, signed, sig, pub)
		f.byMerchant[c.Merchant] = append(f.byMerchant[c.Merchant], c)
	}
	if err := rows.Err(); err != nil {
		return nil, ledger.MapError(err)
	}
	if len(f.byMerchant) == 0 && f.problems.count() == 0 {
		return nil, nil
	}
	return f, nil
}

func (f *closeFollower) bad(c *storedClose, format string, args ...any) {
	f.problems.add(Problem{Check: CheckPeriodClose, Merchant: c.Merchant, Detail: c.label() + ": " + fmt.Sprintf(format, args...)})
}

// checkSigned compares what was signed with the close's columns, and the
// signature with pub when given.
func (f *closeFollower) checkSigned(c *storedClose, signed, sig []byte, pub ed25519.PublicKey) {
	if !bytes.Equal(signed, seal.SignedMessage(PurposePeriodClose, c.Statement())) {
		f.bad(c, "its columns are not the statement it signed: the close was changed")
	}
	if pub == nil {
		return
	}
	if id := KeyID(pub); id != c.KeyID {
		f.bad(c, "signed by key %s, the public key given is %s: another key signed it", c.KeyID, id)
	}
	if !VerifySignature(pub, PurposePeriodClose, c.Statement(), sig) {
		f.bad(c, "the signature does not verify with the public key given")
	}
}

// startMerchant is called when the stream reaches merchant m's entries.
func (f *closeFollower) startMerchant(m int64) {
	if f == nil {
		return
	}
	f.cur, f.next, f.sealed = f.byMerchant[m], 0, nil
	delete(f.byMerchant, m)
	clear(f.fold)
	for f.next < len(f.cur) && f.cur[f.next].HeadSeq == 0 { // closed before the first entry
		f.reach(f.cur[f.next], nil, nil)
	}
}

// entry is called with each entry of the merchant, in sequence, and its
// stored hash.
func (f *closeFollower) entry(r *postings.Record, hash []byte) {
	if f == nil || len(f.cur) == 0 {
		return
	}
	if s := f.sealed; s != nil && r.CreatedAt.Before(s.End.Time) {
		f.problems.add(Problem{Check: CheckPeriodClose, Merchant: r.Merchant, Seq: r.Seq,
			Detail: fmt.Sprintf("entry %d was created at %s, before the end of %s (head %d): it is back-dated or was inserted",
				r.Seq, Stamp{r.CreatedAt}, s.label(), s.HeadSeq)})
	}
	for _, p := range r.Postings {
		f.fold[p.Source] -= p.Amount
		f.fold[p.Destination] += p.Amount
	}
	for f.next < len(f.cur) && f.cur[f.next].HeadSeq <= r.Seq {
		f.reach(f.cur[f.next], r, hash)
	}
}

// reach compares close c with the fold at its head entry r (nil: before
// the first entry).
func (f *closeFollower) reach(c *storedClose, r *postings.Record, hash []byte) {
	f.next++
	if f.sealed == nil || c.End.After(f.sealed.End.Time) {
		f.sealed = c
	}
	if r != nil {
		if r.Seq != c.HeadSeq {
			f.bad(c, "its head is entry %d, which the journal does not have", c.HeadSeq)
			return
		}
		if got := hex.EncodeToString(hash); got != c.HeadHash {
			f.bad(c, "entry %d's hash is %s, the close says %s: an entry up to it was rewritten, inserted or removed", c.HeadSeq, short(got), short(c.HeadHash))
		}
		if !r.CreatedAt.Before(c.End.Time) {
			f.bad(c, "its head, entry %d, was created at %s, not before the period's end %s", c.HeadSeq, Stamp{r.CreatedAt}, c.End)
		}
	}
	got := make(map[string]int64, len(f.fold))
	for a, bal := range f.fold {
		got[a.Address()] = bal
	}
	var differ []string
	for _, addr := range sortedKeys(got, c.balances) {
		if g, w := got[addr], c.balances[addr]; g != w {
			differ = append(differ, fmt.Sprintf("%s: the journal gives %d, the close says %d", addr, g, w))
		}
	}
	for i, d := range differ {
		if i == 10 {
			f.bad(c, "and %d more accounts differ", len(differ)-10)
			break
		}
		f.bad(c, "closing balance of %s", d)
	}
}

// endMerchant is called with the merchant's last sequence in the journal.
func (f *closeFollower) endMerchant(m, last int64) {
	if f == nil {
		return
	}
	for ; f.next < len(f.cur); f.next++ {
		c := f.cur[f.next]
		f.bad(c, "its head is entry %d, the journal ends at %d: entries were removed", c.HeadSeq, last)
	}
	f.cur = nil
}

// finish reports the closes of merchants the journal has no entry of.
func (f *closeFollower) finish() {
	if f == nil {
		return
	}
	for _, m := range slices.Sorted(maps.Keys(f.byMerchant)) {
		for _, c := range f.byMerchant[m] {
			if c.HeadSeq > 0 || len(c.balances) > 0 {
				f.bad(c, "its head is entry %d, the journal has no entry of the merchant", c.HeadSeq)
			}
		}
	}
}

func sortedKeys(a, b map[string]int64) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
