package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/paygate/gateway/internal/audit/seal"
	"github.com/paygate/gateway/ledger"
)

// A checkpoint is every merchant's journal head at one moment, one Merkle
// root over them (internal/audit/seal/merkle.go) and the signature of a
// short statement naming the root (docs/audit.md#checkpoints). The
// statement signed, after the purpose line PurposeCheckpoint
// (seal/signer.go), is three lines of UTF-8, each ending in "\n":
//
//	time <RFC 3339 UTC, microseconds: 2026-11-27T09:42:17.123456Z>
//	tree_size <the number of heads, decimal>
//	root <the root, 64 lower-case hex digits>
//
// The heads themselves are in the file beside the signature: the root
// commits to each of them, so an auditor recomputes the root from them and
// checks the signature with the public key alone.
type Checkpoint struct {
	Version   int              `json:"version"`
	Time      Stamp            `json:"time"`
	KeyID     string           `json:"keyId"`
	TreeSize  int              `json:"treeSize"`
	Root      string           `json:"root"`
	Heads     []CheckpointHead `json:"heads"`
	Signature string           `json:"signature"` // 128 hex digits
}

// Stamp is a checkpoint's time, written the same way in the file and in
// the statement signed: UTC, exactly six decimals
// (2026-11-27T09:42:17.123456Z), so that an auditor copies it as it is.
type Stamp struct{ time.Time }

const stampLayout = "2006-01-02T15:04:05.000000Z"

func (s Stamp) String() string { return s.UTC().Format(stampLayout) }

// MarshalJSON writes the stamp as its string.
func (s Stamp) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads exactly the layout written.
func (s *Stamp) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t, err := time.Parse(stampLayout, v)
	if err != nil {
		return fmt.Errorf("time %q is not of the form 2026-11-27T09:42:17.123456Z", v)
	}
	s.Time = t
	return nil
}

// CheckpointHead is one merchant's head in a checkpoint.
type CheckpointHead struct {
	Merchant int64  `json:"merchant"`
	Seq      int64  `json:"seq"`
	Hash     string `json:"hash"` // 64 hex digits; the zero hash before a merchant's first entry
}

// checkpointVersion is the file's format.
const checkpointVersion = 1

// Statement is the statement the checkpoint's signature covers.
func (c *Checkpoint) Statement() []byte {
	return fmt.Appendf(nil, "time %s\ntree_size %d\nroot %s\n", c.Time, c.TreeSize, c.Root)
}

// computeRoot recomputes the root from the heads, which must be in strictly
// ascending merchant order with 32-byte hashes.
func (c *Checkpoint) computeRoot() (string, error) {
	leaves := make([][32]byte, len(c.Heads))
	for i, h := range c.Heads {
		if i > 0 && h.Merchant <= c.Heads[i-1].Merchant {
			return "", fmt.Errorf("heads are not in strictly ascending merchant order at merchant %d", h.Merchant)
		}
		hash, err := hex.DecodeString(h.Hash)
		if err != nil || len(hash) != 32 || h.Seq < 0 {
			return "", fmt.Errorf("the head of merchant %d is malformed", h.Merchant)
		}
		leaves[i] = seal.LeafHash(seal.HeadLeaf(h.Merchant, h.Seq, hash))
	}
	root := seal.MerkleRoot(leaves)
	return hex.EncodeToString(root[:]), nil
}

// Check verifies the checkpoint on its own, with pub: its heads give its
// root, and its statement carries pub's signature. Each failure is a named
// Problem (CheckCheckpointSignature); none means pub signed these heads.
func (c *Checkpoint) Check(pub ed25519.PublicKey) []Problem {
	var ps []Problem
	bad := func(format string, args ...any) {
		ps = append(ps, Problem{Check: CheckCheckpointSignature, Detail: fmt.Sprintf(format, args...)})
	}
	if c.Version != checkpointVersion {
		bad("checkpoint format version %d, this gateway reads %d", c.Version, checkpointVersion)
	}
	if c.TreeSize != len(c.Heads) {
		bad("tree size %d, the checkpoint lists %d heads", c.TreeSize, len(c.Heads))
	}
	if root, err := c.computeRoot(); err != nil {
		bad("%v", err)
	} else if root != c.Root {
		bad("the heads give the root %s, the checkpoint says %s: a head was changed", root, c.Root)
	}
	if id := KeyID(pub); id != c.KeyID {
		bad("signed by key %s, the public key given is %s: another key signed it", c.KeyID, id)
	}
	sig, err := hex.DecodeString(c.Signature)
	if err != nil || !VerifySignature(pub, PurposeCheckpoint, c.Statement(), sig) {
		bad("the signature does not verify with the public key %s", KeyID(pub))
	}
	return ps
}

// ParseCheckpoint reads a checkpoint file.
func ParseCheckpoint(b []byte) (*Checkpoint, error) {
	var c Checkpoint
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not a checkpoint file: %w", err)
	}
	return &c, nil
}

// checkpointHeadsSQL reads every head in one statement: one snapshot.
const checkpointHeadsSQL = `select merchant_id, last_seq, last_hash from ledger_heads order by merchant_id`

// Checkpoint reads every merchant's head, signs the checkpoint with signer
// and stores it (audit_checkpoints), in one transaction on the primary.
func (s *Service) Checkpoint(ctx context.Context, signer *Signer) (*Checkpoint, error) {
	c := &Checkpoint{Version: checkpointVersion, Time: Stamp{time.Now().UTC().Truncate(time.Microsecond)}, KeyID: signer.KeyID()}
	tx, err := s.l.DB().BeginTx(ctx, nil)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	rows, err := tx.QueryContext(ctx, checkpointHeadsSQL)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	for rows.Next() {
		var h CheckpointHead
		var hash []byte
		if err := rows.Scan(&h.Merchant, &h.Seq, &hash); err != nil {
			rows.Close()
			return nil, ledger.MapError(err)
		}
		h.Hash = hex.EncodeToString(hash)
		c.Heads = append(c.Heads, h)
	}
	if err := rows.Err(); err != nil {
		return nil, ledger.MapError(err)
	}
	c.TreeSize = len(c.Heads)
	if c.Root, err = c.computeRoot(); err != nil {
		return nil, err
	}
	stmt := c.Statement()
	sig := signer.Sign(PurposeCheckpoint, stmt)
	c.Signature = hex.EncodeToString(sig)
	heads, err := json.Marshal(c.Heads)
	if err != nil {
		return nil, err
	}
	root, _ := hex.DecodeString(c.Root)
	if _, err := tx.ExecContext(ctx, `insert into audit_checkpoints (created_at, key_id, tree_size, root, heads, signed, signature)
		values (?, ?, ?, ?, ?, ?, ?)`, c.Time.Time, c.KeyID, c.TreeSize, root, string(heads), seal.SignedMessage(PurposeCheckpoint, stmt), sig); err != nil {
		return nil, ledger.MapError(err)
	}
	return c, ledger.MapError(tx.Commit())
}

// checkpointFollower compares the streamed journal with a checkpoint's
// heads: the entry at each checkpointed sequence must still carry the hash
// the checkpoint recorded, and no merchant's journal may end before it.
// One map probe per merchant, one comparison per merchant: the stream's
// rate does not change.
type checkpointFollower struct {
	heads    map[int64]CheckpointHead // those not yet reached
	cur      CheckpointHead           // the streamed merchant's, Seq 0 if none
	problems problemList
	label    string // names the checkpoint in details
}

func newCheckpointFollower(c *Checkpoint, merchant int64) *checkpointFollower {
	f := &checkpointFollower{heads: map[int64]CheckpointHead{},
		label: fmt.Sprintf("the checkpoint of %s", c.Time.UTC().Format(time.RFC3339))}
	for _, h := range c.Heads {
		if h.Seq > 0 && (merchant == 0 || h.Merchant == merchant) {
			f.heads[h.Merchant] = h
		}
	}
	return f
}

// startMerchant is called when the stream reaches merchant m's entries.
func (f *checkpointFollower) startMerchant(m int64) {
	if f == nil {
		return
	}
	f.cur = f.heads[m]
	delete(f.heads, m)
}

// entry is called with each entry's sequence and stored hash.
func (f *checkpointFollower) entry(m, seq int64, hash []byte) {
	if f == nil || f.cur.Seq != seq {
		return
	}
	if got := hex.EncodeToString(hash); got != f.cur.Hash {
		f.problems.add(Problem{Check: CheckCheckpointDiverged, Merchant: m, Seq: seq,
			Detail: fmt.Sprintf("entry %d's hash is %s, %s says %s: an entry up to %d was rewritten, inserted or removed since",
				seq, short(got), f.label, short(f.cur.Hash), seq)})
	}
}

// endMerchant is called with the merchant's last sequence in the journal.
func (f *checkpointFollower) endMerchant(m, last int64) {
	if f == nil || f.cur.Seq == 0 {
		return
	}
	if last < f.cur.Seq {
		f.problems.add(Problem{Check: CheckCheckpointRollback, Merchant: m,
			Detail: fmt.Sprintf("the journal ends at entry %d, %s has %d: entries were removed since", last, f.label, f.cur.Seq)})
	}
	f.cur = CheckpointHead{}
}

// finish reports the checkpointed merchants the journal has no entry of.
func (f *checkpointFollower) finish() {
	if f == nil {
		return
	}
	for _, m := range slicesSortedKeys(f.heads) {
		f.problems.add(Problem{Check: CheckCheckpointRollback, Merchant: m,
			Detail: fmt.Sprintf("the journal has no entry, %s has %d: entries were removed since", f.label, f.heads[m].Seq)})
	}
}

func slicesSortedKeys(m map[int64]CheckpointHead) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// short shortens a hex hash for a report, as the hash chain's details do.
func short(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:8] + "…" + h[len(h)-4:]
}
