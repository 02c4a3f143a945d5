package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/internal/audit/metadata"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The journal in chain order: three cursors, one per table, each in its
// primary key's order (the bill lines in bill_lines_posting_key's), merged
// by (merchant, seq) in Go (verify_cursor.go). An entry, its postings and
// their bill lines arrive together; each posting's two accounts come from
// the account cache (verify_accounts.go). No query joins anything: each is
// one index read in order, which no statistics can turn into a rescan
// (issue 17), and nothing is probed per row. The bill lines are checked
// against their postings and entry here, as they go by (verify_bill.go),
// instead of by queries that joined a million lines to their postings.
//
// Results are binary: integers and timestamps arrive as fixed-size words,
// hashes as raw bytes, and nothing is formatted as text by the server or
// parsed by Go. The merchant is written into the text (%[1]d, an integer):
// PostgreSQL then plans with it as a constant, so that "0 = 0" folds away
// and one merchant's journal is an index range.
const (
	verifyEntriesSQL = `
	select merchant_id, merchant_seq, kind, created_at, card_no, tx_id, auth_id, metadata, prev_hash, hash, id
	from entries where %[1]d = 0 or merchant_id = %[1]d
	order by merchant_id, merchant_seq`
	verifyPostingsSQL = `
	select merchant_id, merchant_seq, idx, amount, currency, source_id, destination_id
	from postings where %[1]d = 0 or merchant_id = %[1]d
	order by merchant_id, merchant_seq, idx`
	verifyLinesSQL = `
	select merchant_id, merchant_seq, posting_idx, account_id, bill_seq, kind, created_at, amount, currency, balance_after
	from bill_lines where %[1]d = 0 or merchant_id = %[1]d
	order by merchant_id, merchant_seq, posting_idx, account_id`
)

// verifyCursorSettings are in force while the cursors are declared (their
// plans are made then), and only then. With sorting off, reading a table
// through the index that gives the order is the only plan without a
// Sort, so it is the plan whatever the statistics: a sort of the whole
// journal would hold the first row back until every row is read, and spill
// to disk (TestVerifyCursorsReadIndexesInOrder).
const (
	verifyCursorSettings      = `set local enable_sort = off`
	verifyCursorSettingsReset = `set local enable_sort to default`
)

// The columns of each cursor and the type each must have.
const (
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidText        = 25
	oidTimestamptz = 1184
	oidJSONB       = 3802
)

var (
	verifyEntriesTypes  = []uint32{oidInt8, oidInt8, oidText, oidTimestamptz, oidText, oidText, oidText, oidJSONB, oidBytea, oidBytea, oidInt8}
	verifyPostingsTypes = []uint32{oidInt8, oidInt8, oidInt2, oidInt8, oidText, oidInt8, oidInt8}
	verifyLinesTypes    = []uint32{oidInt8, oidInt8, oidInt2, oidInt8, oidInt8, oidText, oidTimestamptz, oidInt8, oidText, oidInt8}
)

// The column positions: entries…
const (
	colKind = 2 + iota
	colCreatedAt
	colCard
	colTx
	colAuth
	colMetadata
	colPrevHash
	colHash
	colID
)

// …postings…
const (
	colPostIdx = 2 + iota
	colPostAmount
	colPostCurrency
	colPostSource
	colPostDestination
)

// …and bill lines.
const (
	colLineIdx = 2 + iota
	colLineAccount
	colLineSeq
	colLineKind
	colLineCreatedAt
	colLineAmount
	colLineCurrency
	colLineBalanceAfter
)

// postgresEpochMicros is 2000-01-01T00:00:00Z in microseconds since the
// Unix epoch: the origin of PostgreSQL's binary timestamps.
const postgresEpochMicros = 946_684_800_000_000

// verifyProgressEvery is how many entries pass between progress calls.
const verifyProgressEvery = 10_000

// journalHead is a merchant's row of ledger_heads.
type journalHead struct {
	seq     int64
	hash    []byte
	billSeq int64 // last_bill_seq
}

// loadHeadsSQL reads the heads: one row of ledger_heads_pkey, or all.
const loadHeadsSQL = `select merchant_id, last_seq, last_hash, last_bill_seq from ledger_heads where $1::bigint = 0 or merchant_id = $1::bigint`

// loadHeads reads the journal heads of the snapshot.
func loadHeads(ctx context.Context, conn *pgx.Conn, merchant int64) (map[int64]journalHead, error) {
	rows, err := conn.Query(ctx, loadHeadsSQL, verifySQLMode, merchant)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	defer rows.Close()
	heads := map[int64]journalHead{}
	for rows.Next() {
		var m int64
		var h journalHead
		if err := rows.Scan(&m, &h.seq, &h.hash, &h.billSeq); err != nil {
			return nil, ledger.MapError(err)
		}
		heads[m] = h
	}
	return heads, ledger.MapError(rows.Err())
}

// chainStream checks the journal as it streams by: sequences, hashes, the
// balance of each entry, empty entries, the heads, and the bill lines
// against their postings. It reuses one record, one posting slice and one
// encoding buffer for every entry, so that a million entries cost no more
// memory than one.
type chainStream struct {
	merchant  int64 // 0: every merchant
	heads     map[int64]journalHead
	billHeads map[int64]int64 // last_bill_seq of the heads the bill has not reached yet
	position  billPosition    // where the old bill rules end (verify_position.go)
	total     int64           // the entries the heads announce, for the progress bar
	progress  func(done, total int64)
	problems  problemList
	bill      problemList // the bill lines' problems (verify_bill.go)
	entries   int64
	postings  int64

	cur       struct{ entries, postings, lines journalCursor }
	fetchRows int          // verifyFetchRows unless set (tests)
	acc       accountCache // the fetcher's while the cursors are read

	strs    interner
	rec     postings.Record // the entry being assembled
	idx     []int16         // the postings' idx, parallel to rec.Postings
	sides   []postingSides  // their accounts' ids, parallel to rec.Postings
	lines   []billLine      // the bill lines of the entry
	hash    postings.Hash   // rec's stored hash
	id      int64           // rec's entries.id
	atMicro int64           // rec's created_at as stored
	nets    []currencyNet
	buf     []byte // the hash's input
	chain   struct {
		merchant int64
		expected int64 // next expected sequence of merchant
		prev     postings.Hash
		lastID   int64 // entries.id of the previous entry of merchant
		lastSeq  int64 // and its sequence
	}
	billSeq  billSeqCount
	follow   chainFollower       // the bill's balance_after chain (verify_chain.go)
	fold     balanceFold         // each account's postings (verify_balances.go)
	accounts accountProblems     // the accounts pass's
	cp       *checkpointFollower // nil without a checkpoint (checkpoint.go)
	rates    rateVersions        // the rate versions entries' facts name (verify_facts.go)
	meta     map[string]string   // the metadata map, reused (internal/audit/metadata)
	closes   *closeFollower      // nil without closed periods (close_verify.go)
	closePub ed25519.PublicKey   // checks the closes' signatures when set
}

// postingSides are a posting's two accounts, by id.
type postingSides struct{ source, destination int64 }

// currencyNet is what one entry moves in one currency: zero when balanced.
type currencyNet struct {
	currency string
	net      int64
}

// run streams the journal on conn, which must be in the verify transaction.
func (s *chainStream) run(ctx context.Context, conn *pgx.Conn) error {
	if err := s.rates.load(ctx, conn); err != nil {
		return err
	}
	var err error
	if s.closes, err = loadCloses(ctx, conn, s.merchant, s.closePub); err != nil {
		return err
	}
	pc := conn.PgConn()
	if err := s.declare(ctx, pc); err != nil {
		return err
	}
	if err := s.merge(ctx, pc); err != nil {
		return err
	}
	// The stream's connection checks next, in the same transaction: the
	// cursors' resources go now.
	if _, err := pc.Exec(ctx, `close all`).ReadAll(); err != nil {
		return ledger.MapError(err)
	}
	s.finishMerchant()
	s.finishBillMerchant()
	s.cp.finish()
	s.closes.finish()
	for _, m := range slices.Sorted(maps.Keys(s.heads)) {
		if h := s.heads[m]; h.seq != 0 {
			s.problems.add(Problem{Check: CheckHead, Merchant: m, Detail: fmt.Sprintf("head says %d entries, the journal has none", h.seq)})
		}
	}
	s.finishBillHeads()
	if err := s.checkAccounts(ctx, conn); err != nil {
		return err
	}
	if s.progress != nil {
		s.progress(s.entries, s.total)
	}
	return nil
}

// merge reads the three cursors, fetched on their own goroutine, key by
// key: each key's entry, postings and bill lines are checked together.
func (s *chainStream) merge(ctx context.Context, pc *pgconn.PgConn) error {
	ctx, cancel := context.WithCancel(ctx)
	f := startFetcher(ctx, pc, &s.cur.entries, &s.cur.postings, &s.cur.lines)
	// At the end every cursor is read and no fetch is under way; after an
	// error, the one under way stops.
	defer func() {
		cancel()
		f.stop()
	}()
	for {
		ev, err := s.cur.entries.peek()
		if err != nil {
			return err
		}
		pv, err := s.cur.postings.peek()
		if err != nil {
			return err
		}
		lv, err := s.cur.lines.peek()
		if err != nil {
			return err
		}
		// The next key is the least of the three cursors' current rows.
		var k journalKey
		found := false
		for _, c := range [...]struct {
			row [][]byte
			cur *journalCursor
		}{{ev, &s.cur.entries}, {pv, &s.cur.postings}, {lv, &s.cur.lines}} {
			if c.row != nil && (!found || c.cur.key().less(k)) {
				k, found = c.cur.key(), true
			}
		}
		if !found {
			break
		}
		hasEntry := ev != nil && s.cur.entries.key() == k
		if err := s.startGroup(ev, k, hasEntry); err != nil {
			return err
		}
		if hasEntry {
			s.cur.entries.advance()
		}
		for pv != nil && s.cur.postings.key() == k {
			if err := s.addPosting(pv); err != nil {
				return err
			}
			s.cur.postings.advance()
			if pv, err = s.cur.postings.peek(); err != nil {
				return err
			}
		}
		for lv != nil && s.cur.lines.key() == k {
			if err := s.addLine(lv); err != nil {
				return err
			}
			s.cur.lines.advance()
			if lv, err = s.cur.lines.peek(); err != nil {
				return err
			}
		}
		s.checkBill(k, hasEntry)
		if hasEntry {
			s.finishEntry()
		} else if len(s.rec.Postings) > 0 {
			s.problems.add(Problem{Check: CheckHashChain, Merchant: k.merchant, Seq: k.seq,
				Detail: fmt.Sprintf("%d postings without their entry: no hash covers them", len(s.rec.Postings))})
		}
	}
	return nil
}

// declare opens the three cursors, planned under verifyCursorSettings.
func (s *chainStream) declare(ctx context.Context, pc *pgconn.PgConn) error {
	s.cur.entries = journalCursor{name: "verify_entries", types: verifyEntriesTypes, rows: s.fetchRows}
	s.cur.postings = journalCursor{name: "verify_postings", types: verifyPostingsTypes, rows: s.fetchRows, fetched: s.resolveAccounts}
	s.cur.lines = journalCursor{name: "verify_lines", types: verifyLinesTypes, rows: s.fetchRows}
	if _, err := pc.Exec(ctx, verifyCursorSettings).ReadAll(); err != nil {
		return ledger.MapError(err)
	}
	for _, c := range [...]struct {
		cur *journalCursor
		sql string
	}{{&s.cur.entries, verifyEntriesSQL}, {&s.cur.postings, verifyPostingsSQL}, {&s.cur.lines, verifyLinesSQL}} {
		if err := declareCursor(ctx, pc, c.cur.name, fmt.Sprintf(c.sql, s.merchant)); err != nil {
			return err
		}
	}
	_, err := pc.Exec(ctx, verifyCursorSettingsReset).ReadAll()
	return ledger.MapError(err)
}

// resolveAccounts gives each posting of a batch just fetched its two
// accounts, looking up in one query those the cache does not know. It runs
// on the fetcher, which alone uses the cache.
func (s *chainStream) resolveAccounts(ctx context.Context, pc *pgconn.PgConn, b *cursorBatch) error {
	ids, err := b.int8Pairs(len(verifyPostingsTypes), colPostSource, colPostDestination)
	if err != nil {
		return err
	}
	if err := s.acc.resolve(ctx, pc, ids); err != nil {
		return err
	}
	b.accts = b.accts[:0]
	for _, id := range ids {
		b.accts = append(b.accts, s.acc.get(id))
	}
	return nil
}

// startGroup starts the rows of key k: the entry's own columns when it
// exists (ev), nothing else otherwise.
func (s *chainStream) startGroup(ev [][]byte, k journalKey, hasEntry bool) error {
	s.rec.Postings = s.rec.Postings[:0]
	s.idx, s.sides, s.lines = s.idx[:0], s.sides[:0], s.lines[:0]
	if !hasEntry {
		return nil
	}
	if k.merchant != s.chain.merchant {
		s.finishMerchant()
		s.chain.merchant, s.chain.expected, s.chain.prev, s.chain.lastID = k.merchant, 1, postings.GenesisHash, 0
		s.cp.startMerchant(k.merchant)
		s.closes.startMerchant(k.merchant)
	}
	return s.startEntry(ev, k.merchant, k.seq)
}

// addPosting adds a posting row to the entry.
func (s *chainStream) addPosting(v [][]byte) error {
	idx, err := int2Col(v, colPostIdx)
	if err != nil {
		return err
	}
	amount, err := int8Col(v, colPostAmount)
	if err != nil {
		return err
	}
	src, err := int8Col(v, colPostSource)
	if err != nil {
		return err
	}
	dst, err := int8Col(v, colPostDestination)
	if err != nil {
		return err
	}
	srcAccount, dstAccount := s.cur.postings.accounts()
	s.fold.add(src, -amount)
	s.fold.add(dst, amount)
	s.idx = append(s.idx, idx)
	s.sides = append(s.sides, postingSides{src, dst})
	s.rec.Postings = append(s.rec.Postings, postings.Posting{
		Source: srcAccount, Destination: dstAccount, Amount: amount, Currency: s.strs.get(v[colPostCurrency]),
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
	s.atMicro = ts
	if s.id, err = int8Col(v, colID); err != nil {
		return err
	}
	r.Metadata = nil
	meta := v[colMetadata]
	if len(meta) == 0 || meta[0] != 1 {
		return fmt.Errorf("ledger: verify: entry %d/%d: unknown jsonb format", m, seq)
	}
	if meta = meta[1:]; len(meta) > 2 { // "{}" is no metadata
		// One map, reused: nothing keeps an entry's metadata past its checks.
		parsed, err := metadata.Parse(meta, s.meta)
		if err != nil {
			s.problems.add(Problem{Check: CheckHashChain, Merchant: m, Seq: seq, Detail: "metadata is not a JSON object of strings"})
		} else {
			r.Metadata, s.meta = parsed, parsed
		}
	}
	r.PrevHash, s.hash = postings.Hash{}, postings.Hash{}
	copy(r.PrevHash[:], v[colPrevHash])
	copy(s.hash[:], v[colHash])
	return nil
}

// finishEntry checks the entry assembled so far.
// cellIDSpan is how many row ids each cell mints (merchant.CellIDSpan:
// cell n from n × it).
const cellIDSpan = 1_000_000_000_000

func (s *chainStream) finishEntry() {
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
	// Either of the two may be the one stored again: both are named. A
	// merchant moved into this cell from another keeps its entries' ids,
	// minted in that cell's range (internal/cellmove); its entries made
	// here have this cell's ids, lower after a move from a later cell:
	// the order is checked within one cell's range only.
	if s.id <= s.chain.lastID && s.id/cellIDSpan == s.chain.lastID/cellIDSpan {
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
	if r.HasFacts() {
		s.checkFacts()
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
	s.cp.entry(m, seq, s.hash[:])
	s.closes.entry(r, s.hash[:])
	s.chain.prev = s.hash
	s.entries++
	s.postings += int64(len(r.Postings))
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
	s.cp.endMerchant(m, s.chain.expected-1)
	s.closes.endMerchant(m, s.chain.expected-1)
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
	return readInt8(v[col]), nil
}

// readInt8 reads a binary int8 of 8 bytes.
func readInt8(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

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
