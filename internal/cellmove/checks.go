package cellmove

import (
	"bytes"
	"context"
	"fmt"
)

// preconditions refuses a move the copy could not make honest, before
// anything is recorded.
func (mv *Mover) preconditions(ctx context.Context, merchant int64, shopNo string) error {
	// The target must not hold this merchant id or shop number: the copy
	// keeps both, and they are in the entries' hashes.
	var taken bool
	if err := mv.To.DB.NewRaw(`select exists (select 1 from merchants where id = ? or shop_no = ?)
		and not exists (select 1 from cellmove_arrivals where merchant_id = ? and state = 'copying')`,
		merchant, shopNo, merchant).Scan(ctx, &taken); err != nil {
		return fmt.Errorf("cellmove: the target: %w", err)
	}
	if taken {
		return fmt.Errorf("cellmove: cell %s already has merchant id %d or shop number %s: ids must be unique across cells (docs/scaling.md)", mv.To.Name, merchant, shopNo)
	}
	if err := mv.checkDataKeys(ctx); err != nil {
		return err
	}
	return mv.checkReconciled(ctx, merchant)
}

// checkDataKeys: the merchant's keys, PANs and webhook secrets are sealed
// under the source cell's data key and copied as they are, so the target
// must open them: the same data key (binding fingerprint) and every key
// version the source has.
func (mv *Mover) checkDataKeys(ctx context.Context) error {
	var a, b string
	q := "select coalesce((select fingerprint from data_key_binding), '')"
	if err := mv.From.DB.NewRaw(q).Scan(ctx, &a); err != nil {
		return err
	}
	if err := mv.To.DB.NewRaw(q).Scan(ctx, &b); err != nil {
		return err
	}
	if a != "" && b != "" && a != b {
		return fmt.Errorf("cellmove: cells %s and %s have different data keys: the merchant's sealed values would not open", mv.From.Name, mv.To.Name)
	}
	type version struct {
		Version int32
		Wrapped []byte
	}
	var src, dst []version
	vq := "select version, wrapped from data_key_versions where wrapped is not null order by version"
	if err := mv.From.DB.NewRaw(vq).Scan(ctx, &src); err != nil {
		return err
	}
	if err := mv.To.DB.NewRaw(vq).Scan(ctx, &dst); err != nil {
		return err
	}
	have := map[int32][]byte{}
	for _, v := range dst {
		have[v.Version] = v.Wrapped
	}
	for _, v := range src {
		if w, ok := have[v.Version]; !ok || !bytes.Equal(w, v.Wrapped) {
			return fmt.Errorf("cellmove: data key version %d of cell %s is not in cell %s", v.Version, mv.From.Name, mv.To.Name)
		}
	}
	return nil
}

// checkReconciled refuses a merchant with entries that a settlement-file
// reconciliation recorded: those records are the source cell's, they name
// the entries by id, and they are append-only (not moved yet: docs/scaling.md).
func (mv *Mover) checkReconciled(ctx context.Context, merchant int64) error {
	var n int64
	if err := mv.From.DB.NewRaw(`select count(*) from reconciled_items r join entries e on e.id = r.entry_id
		where e.merchant_id = ?`, merchant).Scan(ctx, &n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("cellmove: %d entries of the merchant are in reconciliation records of cell %s; moving them is not supported", n, mv.From.Name)
	}
	return nil
}
