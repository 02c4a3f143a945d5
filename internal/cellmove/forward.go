package cellmove

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"
)

// The forwarding of a moved merchant's network and rail ids (sql/,
// "cellmove forwards"; docs/scaling.md, "Network messages of a moving
// merchant"): its card numbers, authorization ids and remittance ids carry
// the source cell, so the source keeps where they went. The internal
// router reads them (Forward).

// forwardCards records, in the pause's transaction, the merchant's cards
// as paused (no target yet): the router declines their authorizations.
// Only the cards: they are few, and the pause should not grow with the
// merchant's history; an authorization's later messages reach the source
// until the switch, where the fence holds them (503).
func forwardCards(ctx context.Context, tx bun.IDB, r *record) error {
	_, err := tx.NewRaw(`insert into cellmove_forwards (id, move_id, to_cell)
		select card_no, ?, null from cards where merchant_id = ?
		on conflict (id) do update set move_id = excluded.move_id, to_cell = null`, r.ID, r.Merchant).Exec(ctx)
	return err
}

// forwardAll points every card, authorization and remittance of the
// merchant at the target, in the switch's transaction at the source (whose
// rows are still there: they are removed after). The remittances are the
// rail's: its reports name the txId, which may arrive days later.
func forwardAll(ctx context.Context, tx bun.IDB, r *record) error {
	_, err := tx.NewRaw(`insert into cellmove_forwards (id, move_id, to_cell)
		select card_no, ?0, ?1 from cards where merchant_id = ?2
		union all select auth_id, ?0, ?1 from authorizations where merchant_id = ?2
		union all select tx_id, ?0, ?1 from remittances where merchant_id = ?2
		on conflict (id) do update set move_id = excluded.move_id, to_cell = excluded.to_cell`,
		r.ID, r.To, r.Merchant).Exec(ctx)
	return err
}

// unforwardArrived removes, at the target, the forwarding of a merchant
// that arrives back in a cell it once left: its ids are here again.
func unforwardArrived(ctx context.Context, tx bun.IDB, merchant int64) error {
	_, err := tx.NewRaw(`delete from cellmove_forwards where id in
		(select card_no from cards where merchant_id = ?0 union all select auth_id from authorizations where merchant_id = ?0
		 union all select tx_id from remittances where merchant_id = ?0)`,
		merchant).Exec(ctx)
	return err
}

// unforwardMove removes a rolled-back move's forwarding at the source.
func unforwardMove(ctx context.Context, tx bun.IDB, r *record) error {
	_, err := tx.NewRaw("delete from cellmove_forwards where move_id = ?", r.ID).Exec(ctx)
	return err
}

// HasForwards is whether db, a cell's database, forwards any id: the
// router asks Forward only of a cell that does.
func HasForwards(ctx context.Context, db bun.IDB) (bool, error) {
	var has bool
	err := db.NewRaw("select exists (select 1 from cellmove_forwards)").Scan(ctx, &has)
	return has, err
}

// Forward is where db, a cell's database, forwards id (a card number, an
// authorization id or a remittance id): found false when it keeps no forwarding for it (the
// id is its own, or nobody's); to "" while the merchant's move is paused.
func Forward(ctx context.Context, db bun.IDB, id string) (to string, found bool, err error) {
	var cell sql.NullString
	err = db.NewRaw("select to_cell from cellmove_forwards where id = ?", id).Scan(ctx, &cell)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return cell.String, err == nil, err
}
