package ledger

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/postings"
)

// flush writes the batch: one statement per table, whatever the number of
// commands, with the balances netted to one update per account.
func (st *state) flush() error {
	if err := st.flushAccounts(); err != nil {
		return err
	}
	if err := st.flushJournal(); err != nil {
		return err
	}
	if err := st.flushBalances(); err != nil {
		return err
	}
	if err := st.flushHeads(); err != nil {
		return err
	}
	if err := st.flushIdempotency(); err != nil {
		return err
	}
	return st.ext.flush(st)
}

func (st *state) flushAccounts() error {
	if len(st.newAccounts) == 0 {
		return nil
	}
	accts := make([]accountRow, 0, len(st.newAccounts))
	bals := make([]balanceRow, 0, len(st.newAccounts))
	for _, a := range st.newAccounts {
		accts = append(accts, accountRow{
			ID: a.id, MerchantID: a.account.Merchant, Type: string(a.account.Type),
			Currency: a.account.Currency, CardNo: nullString(a.account.Card), Address: a.account.Address(),
		})
		bals = append(bals, balanceRow{
			AccountID: a.id, MerchantID: a.account.Merchant, Currency: a.account.Currency,
			Constrained: a.account.Type.Constrained(),
		})
	}
	if _, err := st.tx.NewInsert().Model(&accts).Exec(st.ctx); err != nil {
		return mapError(err)
	}
	if _, err := st.tx.NewInsert().Model(&bals).Exec(st.ctx); err != nil {
		return mapError(err)
	}
	return nil
}

func (st *state) flushJournal() error {
	if len(st.entries) == 0 {
		return nil
	}
	entries := make([]entryRow, 0, len(st.entries))
	var ps []postingRow
	for _, r := range st.entries {
		meta := r.Metadata
		if meta == nil {
			meta = map[string]string{}
		}
		entries = append(entries, entryRow{
			MerchantID: r.Merchant, MerchantSeq: r.Seq, Kind: string(r.Kind), CreatedAt: r.CreatedAt,
			CardNo: nullString(r.Refs.CardNo), TxID: nullString(r.Refs.TxID), AuthID: nullString(r.Refs.AuthID),
			Metadata: meta, PrevHash: r.PrevHash[:], Hash: r.Hash[:],
		})
		for i, p := range r.Postings {
			ps = append(ps, postingRow{
				MerchantID: r.Merchant, MerchantSeq: r.Seq, Idx: int16(i),
				SourceID:      st.accounts[p.Source.Address()].id,
				DestinationID: st.accounts[p.Destination.Address()].id,
				Amount:        p.Amount, Currency: p.Currency,
			})
		}
	}
	if _, err := st.tx.NewInsert().Model(&entries).Exec(st.ctx); err != nil {
		return mapError(err)
	}
	if _, err := st.tx.NewInsert().Model(&ps).Exec(st.ctx); err != nil {
		return mapError(err)
	}
	if len(st.bills) > 0 {
		if _, err := st.tx.NewInsert().Model(&st.bills).Exec(st.ctx); err != nil {
			return mapError(err)
		}
	}
	return nil
}

// flushBalances applies each touched account's net change and reads the
// result back: a balance that is not what the batch computed means something
// changed it outside the writer, and the batch is abandoned.
func (st *state) flushBalances() error {
	var ids, deltas, seqs []int64
	want := map[int64]int64{}
	for _, a := range st.accounts {
		if !a.touched {
			continue
		}
		ids = append(ids, a.id)
		deltas = append(deltas, a.balance-a.loaded)
		seqs = append(seqs, a.lastSeq)
		want[a.id] = a.balance
	}
	if len(ids) == 0 {
		return nil
	}
	var got []struct {
		AccountID int64 `bun:"account_id"`
		Balance   int64 `bun:"balance"`
	}
	err := st.tx.NewRaw(`
		update balances b set balance = b.balance + v.delta, last_seq = v.seq
		from unnest(?::bigint[], ?::bigint[], ?::bigint[]) as v(id, delta, seq)
		where b.account_id = v.id
		returning b.account_id, b.balance`,
		pgdialect.Array(ids), pgdialect.Array(deltas), pgdialect.Array(seqs)).Scan(st.ctx, &got)
	if err != nil {
		return mapError(err)
	}
	if len(got) != len(ids) {
		return fmt.Errorf("ledger: invariant: %d balances updated, %d expected", len(got), len(ids))
	}
	for _, g := range got {
		if want[g.AccountID] != g.Balance {
			return fmt.Errorf("ledger: invariant: account %d has balance %d after the batch, the batch computed %d",
				g.AccountID, g.Balance, want[g.AccountID])
		}
	}
	return nil
}

func (st *state) flushHeads() error {
	var ms, seqs, bills, events []int64
	var hashes, tss []string
	for id, h := range st.heads {
		if !h.dirty {
			continue
		}
		ms = append(ms, id)
		seqs = append(seqs, h.seq)
		bills = append(bills, h.billSeq)
		events = append(events, h.eventSeq)
		hashes = append(hashes, hex.EncodeToString(h.hash[:]))
		tss = append(tss, h.ts.UTC().Format(time.RFC3339Nano))
	}
	if len(ms) == 0 {
		return nil
	}
	res, err := st.tx.NewRaw(`
		update ledger_heads h
		set last_seq = v.seq, last_hash = decode(v.hash, 'hex'), last_bill_seq = v.bill,
		    last_event_seq = v.event, last_ts = v.ts::timestamptz
		from unnest(?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[], ?::text[]) as v(m, seq, hash, bill, event, ts)
		where h.merchant_id = v.m`,
		pgdialect.Array(ms), pgdialect.Array(seqs), pgdialect.Array(hashes), pgdialect.Array(bills),
		pgdialect.Array(events), pgdialect.Array(tss)).
		Exec(st.ctx)
	if err != nil {
		return mapError(err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(ms)) {
		return fmt.Errorf("ledger: invariant: %d heads updated, %d expected", n, len(ms))
	}
	return nil
}

// recordsSeqRange returns the first and last sequence of records.
func recordsSeqRange(recs []*postings.Record) (first, last int64) {
	if len(recs) == 0 {
		return 0, 0
	}
	return recs[0].Seq, recs[len(recs)-1].Seq
}
