package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/postings"
)

// The journal in chain order: each entry with its postings and both
// accounts of each posting. The postings of an entry arrive in any order
// (the stream sorts them by idx). Each entry probes its postings
// (postings_pkey) and each posting its two accounts (accounts_pkey), in
// lateral subqueries that "offset 0" keeps from being flattened into joins:
// the plan is the same whatever the statistics say (issue 17: a join chosen
// from statistics of a young database can rescan a table for every row).
// Results are binary (pgconn, no database/sql): integers and timestamps
// arrive as fixed-size words, hashes as raw bytes, and nothing is formatted
// as text by the server or parsed by Go. The merchant is written into the
// text (%[1]d, an integer): PostgreSQL then plans with it as a constant, so
// that "0 = 0" folds away and one merchant's journal is an index range. As
// a parameter it would get a generic plan (db.go sets plan_cache_mode =
// force_generic_plan on every connection), which reads the whole journal
// and filters it.
const verifyStreamSQL = `
	select e.merchant_id, e.merchant_seq, e.kind, e.created_at, e.card_no, e.tx_id, e.auth_id,
	       e.metadata, e.prev_hash, e.hash,
	       p.idx, p.amount, p.currency,
	       p.src_merchant, p.src_type, p.src_currency, p.src_card,
	       p.dst_merchant, p.dst_type, p.dst_currency, p.dst_card,
	       e.id
	from entries e
	left join lateral (
		select p.idx, p.amount, p.currency,
		       sa.merchant_id as src_merchant, sa.type as src_type, sa.currency as src_currency, sa.card_no as src_card,
		       da.merchant_id as dst_merchant, da.type as dst_type, da.currency as dst_currency, da.card_no as dst_card
		from postings p
		left join lateral (select merchant_id, type, currency, card_no from accounts where id = p.source_id offset 0) sa on true
		left join lateral (select merchant_id, type, currency, card_no from accounts where id = p.destination_id offset 0) da on true
		where p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq
		offset 0) p on true
	where %[1]d = 0 or e.merchant_id = %[1]d
	order by e.merchant_id, e.merchant_seq`

// The stream's columns and the type each must have: the decoder reads the
// binary format of exactly these types, so a schema that changed under it is
// an error, not a wrong reading.
const (
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidText        = 25
	oidTimestamptz = 1184
	oidJSONB       = 3802
)

var verifyStreamTypes = [...]uint32{
	oidInt8, oidInt8, oidText, oidTimestamptz, oidText, oidText, oidText,
	oidJSONB, oidBytea, oidBytea,
	oidInt2, oidInt8, oidText,
	oidInt8, oidText, oidText, oidText,
	oidInt8, oidText, oidText, oidText,
	oidInt8,
}

// The column positions.
const (
	colMerchant = iota
	colSeq
	colKind
	colCreatedAt
	colCard
	colTx
	colAuth
	colMetadata
	colPrevHash
	colHash
	colIdx
	colAmount
	colCurrency
	colSrcMerchant
	colSrcType
	colSrcCurrency
	colSrcCard
	colDstMerchant
	colDstType
	colDstCurrency
	colDstCard
	colID
)

// postgresEpochMicros is 2000-01-01T00:00:00Z in microseconds since the
// Unix epoch: the origin of PostgreSQL's binary timestamps.
const postgresEpochMicros = 946_684_800_000_000

// verifyProgressEvery is how many entries pass between progress calls.
const verifyProgressEvery = 10_000

// journalHead is a merchant's row of ledger_heads.
type journalHead struct {
	seq  int64
	hash []byte
}

// loadHeadsSQL reads the heads: one row of ledger_heads_pkey, or all.
const loadHeadsSQL = `select merchant_id, last_seq, last_hash from ledger_heads where $1::bigint = 0 or merchant_id = $1::bigint`

// loadHeads reads the journal heads of the snapshot.
func loadHeads(ctx context.Context, conn *pgx.Conn, merchant int64) (map[int64]journalHead, error) {
	rows, err := conn.Query(ctx, loadHeadsSQL, verifySQLMode, merchant)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	heads := map[int64]journalHead{}
	for rows.Next() {
		var m int64
		var h journalHead
		if err := rows.Scan(&m, &h.seq, &h.hash); err != nil {
			return nil, mapError(err)
		}
		heads[m] = h
	}
	return heads, mapError(rows.Err())
}

// chainStream checks the journal as it streams by: sequences, hashes, the
// balance of each entry, empty entries and the heads. It reuses one record,
// one posting slice and one encoding buffer for every entry, so that a
// million entries cost no more memory than one.
type chainStream struct {
	merchant int64 // 0: every merchant
	heads    map[int64]journalHead
	total    int64 // the entries the heads announce, for the progress bar
	progress func(done, total int64)
	problems problemList
	entries  int64
	postings int64

	strs  interner
	rec   postings.Record // the entry being assembled
	idx   []int16         // the postings' idx, parallel to rec.Postings
	have  bool            // rec holds an entry
	hash  postings.Hash   // rec's stored hash
	id    int64           // rec's entries.id
	nets  []currencyNet
	buf   []byte // the hash's input
	chain struct {
		merchant int64
		expected int64 // next expected sequence of merchant
		prev     postings.Hash
		lastID   int64 // entries.id of the previous entry of merchant
		lastSeq  int64 // and its sequence
	}
}

// currencyNet is what one entry moves in one currency: zero when balanced.
type currencyNet struct {
	currency string
	net      int64
}

// run streams the journal on conn, which must be in the verify transaction.
func (s *chainStream) run(ctx context.Context, conn *pgx.Conn) error {
	rr := conn.PgConn().ExecParams(ctx, fmt.Sprintf(verifyStreamSQL, s.merchant), nil, nil, nil, []int16{pgx.BinaryFormatCode})
	if err := checkStreamColumns(rr.FieldDescriptions()); err != nil {
		rr.Close()
		return err
	}
	for rr.NextRow() {
		if err := s.row(rr.Values()); err != nil {
			rr.Close()
			return err
		}
	}
	if _, err := rr.Close(); err != nil {
		return mapError(err)
	}
	s.finishEntry()
	s.finishMerchant()
	for m, h := range s.heads {
		if h.seq != 0 {
			s.problems.add(Problem{Check: CheckHead, Merchant: m, Detail: fmt.Sprintf("head says %d entries, the journal has none", h.seq)})
		}
	}
	if s.progress != nil {
		s.progress(s.entries, s.total)
	}
	return nil
}

func checkStreamColumns(fds []pgconn.FieldDescription) error {
	if fds == nil {
		return nil // the query failed: Close reports why
	}
	if len(fds) != len(verifyStreamTypes) {
		return fmt.Errorf("ledger: verify: the journal query returned %d columns, want %d", len(fds), len(verifyStreamTypes))
	}
	for i, fd := range fds {
		if fd.DataTypeOID != verifyStreamTypes[i] || fd.Format != pgx.BinaryFormatCode {
			return fmt.Errorf("ledger: verify: column %s has type %d (format %d), want type %d in binary",
				fd.Name, fd.DataTypeOID, fd.Format, verifyStreamTypes[i])
		}
	}
	return nil
}

// row takes one row: the first of an entry starts it, each carries at most
// one posting.
func (s *chainStream) row(v [][]byte) error {
	m, err := int8Col(v, colMerchant)
	if err != nil {
		return err
	}
	seq, err := int8Col(v, colSeq)
	if err != nil {
		return err
	}
	if !s.have || s.rec.Merchant != m || s.rec.Seq != seq {
		s.finishEntry()
		if m != s.chain.merchant {
			s.finishMerchant()
			s.chain.merchant, s.chain.expected, s.chain.prev, s.chain.lastID = m, 1, postings.GenesisHash, 0
		}
		if err := s.startEntry(v, m, seq); err != nil {
			return err
		}
	}
	if v[colIdx] == nil {
		return nil // an entry without postings: the left join's one row
	}
	idx, err := int2Col(v, colIdx)
	if err != nil {
		return err
	}
	amount, err := int8Col(v, colAmount)
	if err != nil {
		return err
	}
	src, err := s.account(v, colSrcMerchant)
	if err != nil {
		return err
	}
	dst, err := s.account(v, colDstMerchant)
	if err != nil {
		return err
	}
	s.postings++
	s.idx = append(s.idx, idx)
	s.rec.Postings = append(s.rec.Postings, postings.Posting{
		Source: src, Destination: dst, Amount: amount, Currency: s.strs.get(v[colCurrency]),
	})
	return nil
}

// startEntry fills the reused record with the entry's own columns.
func (s *chainStream) startEntry(v [][]byte, m, seq int64) error {
	ts, err := int8Col(v, colCreatedAt)
	if err != nil {
		return err
	}
	r := &s.rec
	r.Postings = r.Postings[:0]
	s.idx = s.idx[:0]
	r.Merchant, r.Seq = m, seq
	r.Kind = postings.Kind(s.strs.get(v[colKind]))
	r.CreatedAt = time.UnixMicro(ts + postgresEpochMicros).UTC()
	// References are mostly unique: interning them would only fill the
	// table. NULL reads as empty, as the hash encodes it.
	r.Refs = postings.Refs{CardNo: s.strs.get(v[colCard]), TxID: string(v[colTx]), AuthID: string(v[colAuth])}
	// The hash reads NULL and '' alike; the writer never stores '' (it
	// writes NULL for no reference), so an empty one was put there later.
	for _, ref := range [...]struct {
		col  int
		name string
	}{{colCard, "card_no"}, {colTx, "tx_id"}, {colAuth, "auth_id"}} {
		if v[ref.col] != nil && len(v[ref.col]) == 0 {
			s.problems.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq,
				Detail: ref.name + " is empty instead of NULL: the writer stores no reference as NULL"})
		}
	}
	if s.id, err = int8Col(v, colID); err != nil {
		return err
	}
	r.Metadata = nil
	meta := v[colMetadata]
	if len(meta) == 0 || meta[0] != 1 {
		return fmt.Errorf("ledger: verify: entry %d/%d: unknown jsonb format", m, seq)
	}
	if meta = meta[1:]; len(meta) > 2 { // "{}" is no metadata
		if err := json.Unmarshal(meta, &r.Metadata); err != nil {
			s.problems.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq, Detail: "metadata is not a JSON object of strings"})
		}
	}
	r.PrevHash, s.hash = postings.Hash{}, postings.Hash{}
	copy(r.PrevHash[:], v[colPrevHash])
	copy(s.hash[:], v[colHash])
	s.have = true
	return nil
}

// account reads the four columns of a posting's account starting at col.
// A missing account (NULL, from the left join) reads as the zero account,
// whose address no hash commits to.
func (s *chainStream) account(v [][]byte, col int) (postings.Account, error) {
	var a postings.Account
	if v[col] != nil {
		m, err := int8Col(v, col)
		if err != nil {
			return a, err
		}
		a.Merchant = m
	}
	a.Type = postings.AccountType(s.strs.get(v[col+1]))
	a.Currency = s.strs.get(v[col+2])
	a.Card = s.strs.get(v[col+3])
	return a, nil
}

// finishEntry checks the entry assembled so far.
func (s *chainStream) finishEntry() {
	if !s.have {
		return
	}
	s.have = false
	r := &s.rec
	if !slices.IsSorted(s.idx) {
		sortPostingsByIdx(s.idx, r.Postings)
	}
	m, seq := r.Merchant, r.Seq
	// The hash commits to the order of the postings, not to their idx:
	// the writer numbers them 0..n-1, so any other numbering was changed.
	for i, idx := range s.idx {
		if int(idx) != i {
			s.problems.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq,
				Detail: fmt.Sprintf("postings are numbered %v, not 0 to %d", s.idx, len(s.idx)-1)})
			break
		}
	}
	// entries.id is the storage order: the writer inserts a merchant's
	// entries in sequence order under its head lock, so the ids of one
	// merchant rise with the sequence. The hash cannot cover the id (the
	// database assigns it on insert); this catches an entry re-stored.
	// Either of the two may be the one stored again: both are named.
	if s.id <= s.chain.lastID {
		detail := fmt.Sprintf("entries %d and %d are stored out of order (ids %d and %d): one was stored again",
			s.chain.lastSeq, seq, s.chain.lastID, s.id)
		s.problems.add(Problem{Check: CheckSequence, Merchant: m, Seq: s.chain.lastSeq, Detail: detail})
		s.problems.add(Problem{Check: CheckSequence, Merchant: m, Seq: seq, Detail: detail})
	}
	s.chain.lastID, s.chain.lastSeq = s.id, seq
	if seq != s.chain.expected {
		s.problems.add(Problem{Check: CheckSequence, Merchant: m, Seq: seq, Detail: fmt.Sprintf("expected sequence %d", s.chain.expected)})
	}
	s.chain.expected = seq + 1
	if r.PrevHash != s.chain.prev {
		s.problems.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq, Detail: "prev_hash is not the previous entry's hash"})
	}
	if len(r.Postings) == 0 {
		s.problems.add(Problem{Check: CheckEmptyEntry, Merchant: m, Seq: seq, Detail: "entry without postings"})
	}
	var got postings.Hash
	if got, s.buf = postings.ChainHashBuffer(s.buf, r.PrevHash, r); got != s.hash {
		s.problems.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq,
			Detail: fmt.Sprintf("stored hash %s, recomputed %s: the entry or its postings changed", s.hash, got)})
	}
	// Balanced per currency, counted on the accounts' own currencies, and
	// confined to the merchant.
	nets := s.nets[:0]
	for _, p := range r.Postings {
		nets = addNet(addNet(nets, p.Source.Currency, -p.Amount), p.Destination.Currency, p.Amount)
		if p.Source.Merchant != m || p.Destination.Merchant != m {
			s.problems.add(Problem{Check: CheckBalanced, Merchant: m, Seq: seq, Detail: "a posting touches another merchant's account"})
		}
		if p.Amount <= 0 {
			s.problems.add(Problem{Check: CheckBalanced, Merchant: m, Seq: seq, Detail: fmt.Sprintf("posting amount %d", p.Amount)})
		}
	}
	for _, n := range nets {
		if n.net != 0 {
			s.problems.add(Problem{Check: CheckBalanced, Merchant: m, Seq: seq, Detail: fmt.Sprintf("does not sum to zero in %s (%d)", n.currency, n.net)})
		}
	}
	s.nets = nets
	s.chain.prev = s.hash
	s.entries++
	if s.progress != nil && s.entries%verifyProgressEvery == 0 {
		s.progress(s.entries, s.total)
	}
}

func addNet(nets []currencyNet, currency string, delta int64) []currencyNet {
	for i := range nets {
		if nets[i].currency == currency {
			nets[i].net += delta
			return nets
		}
	}
	return append(nets, currencyNet{currency, delta})
}

// sortPostingsByIdx puts an entry's postings in idx order, the order the
// hash commits to (an insertion sort: an entry has at most 16).
func sortPostingsByIdx(idx []int16, ps []postings.Posting) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && idx[j] < idx[j-1]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// finishMerchant compares the merchant's head with the end of its chain.
func (s *chainStream) finishMerchant() {
	m := s.chain.merchant
	if m == 0 {
		return
	}
	h, ok := s.heads[m]
	switch {
	case !ok:
		s.problems.add(Problem{Check: CheckHead, Merchant: m, Detail: "entries without a journal head"})
	case h.seq != s.chain.expected-1:
		s.problems.add(Problem{Check: CheckHead, Merchant: m, Detail: fmt.Sprintf("head says %d entries, the journal has %d", h.seq, s.chain.expected-1)})
	case !bytes.Equal(h.hash, s.chain.prev[:]):
		s.problems.add(Problem{Check: CheckHead, Merchant: m, Detail: "head hash differs from the last entry's hash"})
	}
	delete(s.heads, m)
}

func int8Col(v [][]byte, col int) (int64, error) {
	if len(v[col]) != 8 {
		return 0, fmt.Errorf("ledger: verify: column %d: %d bytes for an int8", col, len(v[col]))
	}
	return int64(binary.BigEndian.Uint64(v[col])), nil
}

func int2Col(v [][]byte, col int) (int16, error) {
	if len(v[col]) != 2 {
		return 0, fmt.Errorf("ledger: verify: column %d: %d bytes for an int2", col, len(v[col]))
	}
	return int16(binary.BigEndian.Uint16(v[col])), nil
}

// interner keeps one copy of the short strings that repeat on every row
// (kinds, account types, currencies, card tokens), so that reading them
// allocates nothing. It forgets everything when full: memory stays bounded
// however many cards the journal names.
type interner map[string]string

const internedMax = 1 << 14

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := (*in)[string(b)]; ok {
		return s
	}
	if *in == nil || len(*in) >= internedMax {
		*in = make(interner, 64)
	}
	s := string(b)
	(*in)[s] = s
	return s
}
