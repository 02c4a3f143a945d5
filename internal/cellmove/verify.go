package cellmove

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/ledger"
)

// Head is a merchant's journal head: the chain continues from it.
type Head struct {
	Seq, BillSeq, EventSeq int64
	Hash                   []byte
}

func readHead(ctx context.Context, db bun.IDB, merchant int64) (Head, error) {
	var h Head
	err := db.NewRaw("select last_seq, coalesce(last_hash, ''::bytea), last_bill_seq, last_event_seq from ledger_heads where merchant_id = ?", merchant).
		Scan(ctx, &h.Seq, &h.Hash, &h.BillSeq, &h.EventSeq)
	return h, err
}

func (h Head) equal(o Head) bool {
	return h.Seq == o.Seq && h.BillSeq == o.BillSeq && h.EventSeq == o.EventSeq && bytes.Equal(h.Hash, o.Hash)
}

// errRowsDiffer is verify's answer when a table holds more or fewer of
// the merchant's rows in one cell than in the other.
var errRowsDiffer = errors.New("cellmove")

// verify checks the target's copy while the merchant is paused: its head
// equals the source's (sequence, hash, bill and event sequences), every
// table holds as many of its rows in both cells, and audit verify of that
// merchant alone (the chain, the sequences, the balances, the bill, the
// holds, recomputed from the copied rows) finds nothing.
func (mv *Mover) verify(ctx context.Context, r *record) (Head, error) {
	src, err := readHead(ctx, mv.From.DB, r.Merchant)
	if err != nil {
		return Head{}, fmt.Errorf("cellmove: the source's head: %w", err)
	}
	dst, err := readHead(ctx, mv.To.DB, r.Merchant)
	if err != nil {
		return Head{}, fmt.Errorf("cellmove: the target's head: %w", err)
	}
	if !src.equal(dst) {
		return Head{}, fmt.Errorf("cellmove: the target's head (seq %d, hash %x) is not the source's (seq %d, hash %x)", dst.Seq, dst.Hash, src.Seq, src.Hash)
	}
	a, err := counts(ctx, mv.From.DB, tables, r.Merchant)
	if err != nil {
		return Head{}, err
	}
	b, err := counts(ctx, mv.To.DB, tables, r.Merchant)
	if err != nil {
		return Head{}, err
	}
	for i, t := range tables {
		if a[i] != b[i] {
			return Head{}, fmt.Errorf("%w: %s has %d rows of the merchant in %s and %d in %s", errRowsDiffer, t.name, a[i], mv.From.Name, b[i], mv.To.Name)
		}
	}
	rep, err := VerifyMerchant(ctx, mv.To.DB, r.Merchant)
	if err != nil {
		return Head{}, err
	}
	if !rep.OK() {
		return Head{}, fmt.Errorf("cellmove: audit verify of the copy in %s: %d problems, the first %s", mv.To.Name, len(rep.Problems), rep.Problems[0])
	}
	return src, nil
}

// VerifyMerchant runs audit verify for one merchant on db, as `gateway
// audit verify --shop-no` does.
func VerifyMerchant(ctx context.Context, db *bun.DB, merchant int64) (*audit.Report, error) {
	l := ledger.New(db, ledger.Config{})
	defer l.Close()
	return audit.New(l).Verify(ctx, audit.VerifyOptions{Merchant: merchant})
}

// counts counts the merchant's rows of each table, in one transaction
// whose setting is the merchant.
func counts(ctx context.Context, db *bun.DB, ts []table, merchant int64) ([]int64, error) {
	out := make([]int64, len(ts))
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw("select set_config('cellmove.m', ?, true)", fmt.Sprint(merchant)).Exec(ctx); err != nil {
			return err
		}
		for i, t := range ts {
			if err := tx.NewRaw("select count(*) from "+quoteIdent(t.name)+" where "+t.where).Scan(ctx, &out[i]); err != nil {
				return fmt.Errorf("cellmove: counting %s: %w", t.name, err)
			}
		}
		return nil
	})
	return out, err
}
