package ledger

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/postings"
)

// flush writes the batch in one pipeline: one statement per table, whatever
// the number of commands, with the balances netted to one update per
// account. The statements run in this order (rows before the rows that
// refer to them); the first that fails aborts the transaction.
func (tx *Tx) flush() error {
	p := tx.Pipeline()
	tx.flushAccounts(p)
	if err := tx.flushJournal(p); err != nil {
		return err
	}
	tx.flushBalances(p)
	tx.flushHeads(p)
	tx.flushIdempotency(p)
	tx.flushStates(p)
	tx.flushEvents(p)
	return p.Send()
}

var stmtInsertAccounts = NewStmt(`
	insert into accounts (id, merchant_id, type, currency, card_no, address)
	select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
	     as v(id, m, type, currency, card_no, address)`)

func (tx *Tx) flushAccounts(p *Pipeline) {
	n := len(tx.newAccounts)
	if n == 0 {
		return
	}
	ids, ms := make([]int64, n), make([]int64, n)
	types, curs, addrs := make([]string, n), make([]string, n), make([]string, n)
	cards := make([]*string, n)
	for i, a := range tx.newAccounts {
		ids[i], ms[i] = a.id, a.account.Merchant
		types[i], curs[i], addrs[i] = string(a.account.Type), a.account.Currency, a.account.Address()
		if a.account.Card != "" { // NULL for accounts of no card
			c := a.account.Card
			cards[i] = &c
		}
	}
	p.ExecRows(stmtInsertAccounts, n, "accounts", ids, ms, types, curs, cards, addrs)
}

// Empty references are stored as NULL.
var stmtInsertEntries = NewStmt(`
	insert into entries (merchant_id, merchant_seq, kind, created_at, card_no, tx_id, auth_id, metadata, prev_hash, hash)
	select m, seq, kind, at, nullif(card, ''), nullif(tx, ''), nullif(auth, ''), meta::jsonb, prev, hash
	from unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
	            $8::text[], $9::bytea[], $10::bytea[])
	     as v(m, seq, kind, at, card, tx, auth, meta, prev, hash)`)

var stmtInsertPostings = NewStmt(`
	insert into postings (merchant_id, merchant_seq, idx, source_id, destination_id, amount, currency)
	select * from unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[])`)

var stmtInsertBillLines = NewStmt(`
	insert into bill_lines (merchant_id, bill_seq, merchant_seq, posting_idx, account_id, kind, amount, currency,
	                        balance_after, created_at, card_no, tx_id, auth_id)
	select m, bill, seq, idx, acct, kind, amount, cur, after, at, nullif(card, ''), nullif(tx, ''), nullif(auth, '')
	from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[], $5::bigint[], $6::text[], $7::bigint[],
	            $8::text[], $9::bigint[], $10::timestamptz[], $11::text[], $12::text[], $13::text[])
	     as v(m, bill, seq, idx, acct, kind, amount, cur, after, at, card, tx, auth)`)

func (tx *Tx) flushJournal(p *Pipeline) error {
	n := len(tx.entries)
	if n == 0 {
		return nil
	}
	ms, seqs := make([]int64, n), make([]int64, n)
	kinds, metas := make([]string, n), make([]string, n)
	ats := make([]time.Time, n)
	cards, txs, auths := make([]string, n), make([]string, n), make([]string, n)
	prevs, hashes := make([][]byte, n), make([][]byte, n)
	var pm, ps, psrc, pdst, pamt []int64
	var pidx []int16
	var pcur []string
	for i, r := range tx.entries {
		meta := r.Metadata
		if meta == nil {
			meta = map[string]string{}
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		ms[i], seqs[i], kinds[i], metas[i] = r.Merchant, r.Seq, string(r.Kind), string(b)
		ats[i] = r.CreatedAt
		cards[i], txs[i], auths[i] = r.Refs.CardNo, r.Refs.TxID, r.Refs.AuthID
		prevs[i], hashes[i] = append([]byte(nil), r.PrevHash[:]...), append([]byte(nil), r.Hash[:]...)
		for j, po := range r.Postings {
			pm, ps, pidx = append(pm, r.Merchant), append(ps, r.Seq), append(pidx, int16(j))
			psrc = append(psrc, tx.accounts[po.Source.Address()].id)
			pdst = append(pdst, tx.accounts[po.Destination.Address()].id)
			pamt, pcur = append(pamt, po.Amount), append(pcur, po.Currency)
		}
	}
	p.ExecRows(stmtInsertEntries, n, "entries", ms, seqs, kinds, ats, cards, txs, auths, metas, prevs, hashes)
	p.ExecRows(stmtInsertPostings, len(pm), "postings", pm, ps, pidx, psrc, pdst, pamt, pcur)
	if k := len(tx.bills); k > 0 {
		bm, bseq, bms, bacct, bamt, bafter := make([]int64, k), make([]int64, k), make([]int64, k), make([]int64, k), make([]int64, k), make([]int64, k)
		bidx := make([]int16, k)
		bkind, bcur, bcard, btx, bauth := make([]string, k), make([]string, k), make([]string, k), make([]string, k), make([]string, k)
		bat := make([]time.Time, k)
		for i, b := range tx.bills {
			bm[i], bseq[i], bms[i], bidx[i], bacct[i] = b.MerchantID, b.BillSeq, b.MerchantSeq, b.PostingIdx, b.AccountID
			bkind[i], bamt[i], bcur[i], bafter[i], bat[i] = b.Kind, b.Amount, b.Currency, b.BalanceAfter, b.CreatedAt
			bcard[i], btx[i], bauth[i] = b.CardNo.String, b.TxID.String, b.AuthID.String
		}
		p.ExecRows(stmtInsertBillLines, k, "bill lines", bm, bseq, bms, bidx, bacct, bkind, bamt, bcur, bafter, bat, bcard, btx, bauth)
	}
	return nil
}

// stmtUpsertBalances writes each touched account's balance: a new account's
// row is inserted with its balance after the batch, an existing one gets the
// batch's net change. It is an upsert rather than an insert and an update so
// that each row is written once, and so that its plan is one probe of
// balances_pkey per row whatever the statistics (the arbiter index), where
// "update ... from unnest" is a join that a planner misled by a young table
// turns into a scan of every balance (docs/performance.md).
//
// PostgreSQL checks the row it proposes to insert against the check
// constraints before it looks for a conflict, so an existing account's
// proposed row says constrained = false: its delta may be negative, and the
// row is never inserted (the update keeps the stored flag, and the check
// runs again on the updated row). "inserted" (xmax = 0 on a row this
// statement inserted) lets flushBalances prove that only new accounts were
// inserted and every existing one updated. A conflict on a row of another
// merchant or currency updates nothing, and the count catches it.
var stmtUpsertBalances = NewStmt(`
	insert into balances as b (account_id, merchant_id, currency, constrained, balance, last_seq)
	select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::bool[], $5::bigint[], $6::bigint[])
	on conflict (account_id) do update
	set balance = b.balance + excluded.balance, last_seq = excluded.last_seq
	where b.merchant_id = excluded.merchant_id and b.currency = excluded.currency
	returning b.account_id, b.balance, b.xmax = 0`)

// flushBalances writes each touched or new account's balance and reads the
// result back: a balance that is not what the batch computed means something
// changed it outside the writer, and the batch is abandoned.
func (tx *Tx) flushBalances(p *Pipeline) {
	var ids, ms, deltas, seqs []int64
	var curs []string
	var constrained []bool
	accounts := map[int64]*acctState{}
	for _, a := range tx.accounts {
		if !a.touched && !a.isNew {
			continue
		}
		ids, ms = append(ids, a.id), append(ms, a.account.Merchant)
		curs, constrained = append(curs, a.account.Currency), append(constrained, a.isNew && a.account.Type.Constrained())
		// A new account's loaded balance is 0: its delta is its balance.
		deltas = append(deltas, a.balance-a.loaded)
		seqs = append(seqs, a.lastSeq)
		accounts[a.id] = a
	}
	if len(ids) == 0 {
		return
	}
	p.Query(stmtUpsertBalances, func(rows pgx.Rows) error {
		got := 0
		for rows.Next() {
			var id, balance int64
			var inserted bool
			if err := rows.Scan(&id, &balance, &inserted); err != nil {
				return err
			}
			got++
			a := accounts[id]
			if a == nil {
				return Invariantf("balance of account %d written, not in the batch", id)
			}
			if inserted != a.isNew {
				return Invariantf("account %d: balance row inserted %v, the batch expected %v", id, inserted, a.isNew)
			}
			if a.balance != balance {
				return Invariantf("account %d has balance %d after the batch, the batch computed %d", id, balance, a.balance)
			}
		}
		// A failed statement ends the rows early: report its error, not
		// the short count.
		if err := rows.Err(); err != nil {
			return err
		}
		if got != len(ids) {
			return Invariantf("%d balances written, %d expected", got, len(ids))
		}
		return nil
	}, ids, ms, curs, constrained, deltas, seqs)
}

var stmtUpdateHeads = NewStmt(`
	update ledger_heads h
	set last_seq = v.seq, last_hash = v.hash, last_bill_seq = v.bill, last_event_seq = v.event, last_ts = v.ts
	from unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bigint[], $5::bigint[], $6::timestamptz[])
	     as v(m, seq, hash, bill, event, ts)
	cross join lateral (select ctid from ledger_heads x where x.merchant_id = v.m offset 0) x
	where h.ctid = x.ctid`)

func (tx *Tx) flushHeads(p *Pipeline) {
	var ms, seqs, bills, events []int64
	var hashes [][]byte
	var tss []time.Time
	for id, h := range tx.heads {
		if !h.dirty {
			continue
		}
		ms = append(ms, id)
		seqs = append(seqs, h.seq)
		bills = append(bills, h.billSeq)
		events = append(events, h.eventSeq)
		hashes = append(hashes, append([]byte(nil), h.hash[:]...))
		tss = append(tss, h.ts)
	}
	if len(ms) == 0 {
		return
	}
	p.ExecRows(stmtUpdateHeads, len(ms), "heads", ms, seqs, hashes, bills, events, tss)
}

// recordsSeqRange returns the first and last sequence of records.
func recordsSeqRange(recs []*postings.Record) (first, last int64) {
	if len(recs) == 0 {
		return 0, 0
	}
	return recs[0].Seq, recs[len(recs)-1].Seq
}
