package merchant

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// The re-seal after a rotation: every sealed column of the database, read
// in batches, opened under the version it names and sealed again under the
// current one, one row per statement with the old value as its condition
// (a row changed meanwhile is left to the next pass). Nothing is held
// locked; serve runs it in the background (cmd/gateway), `gateway datakey
// reseal` in the foreground, and both may run at once.

// sealedColumn is one column of sealed values: how to read each row's key
// (k, as text), the additional data its value is sealed with (c, as its
// owning package spells it: a wrong one fails the re-seal's Open, so the
// test of every column catches it) and the value (v), from the table
// aliased t; and how to replace a value that has not changed meanwhile.
type sealedColumn struct {
	table, column, read, replace string
}

// sealedColumns are all of them: the merchants' signing keys
// (internal/merchant), webhook secrets (internal/delivery), console TOTP
// secrets (internal/console) and card numbers (internal/cards).
var sealedColumns = []sealedColumn{
	{"merchants", "private_key_sealed",
		"select t.id::text as k, 'merchant-private-key:' || t.shop_no as c, t.private_key_sealed as v from merchants t",
		"update merchants set private_key_sealed = ? where id = ?::bigint and private_key_sealed = ?"},
	{"merchants", "private_key_prev_sealed",
		"select t.id::text as k, 'merchant-private-key:' || t.shop_no as c, t.private_key_prev_sealed as v from merchants t",
		"update merchants set private_key_prev_sealed = ? where id = ?::bigint and private_key_prev_sealed = ?"},
	{"webhook_secrets", "secret_sealed",
		"select t.merchant_id::text as k, 'merchant-webhook-secret:' || m.shop_no as c, t.secret_sealed as v from webhook_secrets t join merchants m on m.id = t.merchant_id",
		"update webhook_secrets set secret_sealed = ? where merchant_id = ?::bigint and secret_sealed = ?"},
	{"webhook_secrets", "secret_prev_sealed",
		"select t.merchant_id::text as k, 'merchant-webhook-secret:' || m.shop_no as c, t.secret_prev_sealed as v from webhook_secrets t join merchants m on m.id = t.merchant_id",
		"update webhook_secrets set secret_prev_sealed = ? where merchant_id = ?::bigint and secret_prev_sealed = ?"},
	{"console_users", "totp_sealed",
		"select t.id::text as k, 'console-totp:' || t.login as c, t.totp_sealed as v from console_users t",
		"update console_users set totp_sealed = ? where id = ?::bigint and totp_sealed = ?"},
	{"cards", "pan_sealed",
		"select t.card_no as k, 'pan:' || t.card_no as c, t.pan_sealed as v from cards t",
		"update cards set pan_sealed = ? where card_no = ? and pan_sealed = ?"},
}

// versionExpr is the key version a sealed value (the SQL expression v)
// names, in SQL: SealedVersion's rule, 0 without the header.
func versionExpr(v string) string {
	return fmt.Sprintf(`(case when length(%[1]s) >= %[2]d and substring(%[1]s from 1 for %[3]d) = '\x%[4]x'::bytea
		then get_byte(%[1]s, %[3]d) * 256 + get_byte(%[1]s, %[3]d + 1) else 0 end)`, v, headerLen, len(sealHeader), sealHeader)
}

// resealBatch is the rows read per statement.
const resealBatch = 200

// Reseal moves every sealed value under an older key version than the
// current one to the current one, and returns how many it moved.
func (s *Sealer) Reseal(ctx context.Context, db bun.IDB) (int, error) {
	cur := int(s.CurrentVersion())
	moved := 0
	for _, c := range sealedColumns {
		for {
			var rows []struct {
				Key     string `bun:"k"`
				Context string `bun:"c"`
				Sealed  []byte `bun:"v"`
			}
			// The names are this file's constants; the values are bound.
			col := "t." + c.column
			q := c.read + " where " + col + " is not null and " + versionExpr(col) + " < ? limit ?"
			if err := db.NewRaw(q, cur, resealBatch).Scan(ctx, &rows); err != nil {
				return moved, fmt.Errorf("merchant: re-seal of %s.%s: %w", c.table, c.column, err)
			}
			n := 0
			for _, r := range rows {
				plain, err := s.Open(r.Sealed, r.Context)
				if err != nil {
					return moved, fmt.Errorf("merchant: re-seal of %s.%s, row %s: %w", c.table, c.column, r.Key, err)
				}
				res, err := db.NewRaw(c.replace, s.Seal(plain, r.Context), r.Key, r.Sealed).Exec(ctx)
				clear(plain)
				if err != nil {
					return moved, fmt.Errorf("merchant: re-seal of %s.%s, row %s: %w", c.table, c.column, r.Key, err)
				}
				if k, _ := res.RowsAffected(); k > 0 {
					n++
				}
			}
			moved += n
			// A short batch was the last; a batch of rows all changed by
			// someone else meanwhile waits for the next pass.
			if len(rows) < resealBatch || n == 0 {
				break
			}
		}
	}
	return moved, nil
}

// VersionStatus is one key version: how many sealed values still name it.
type VersionStatus struct {
	Version   int
	Rows      int64
	Current   bool
	CreatedAt *time.Time // nil for version 0, the data key itself
	RetiredAt *time.Time
}

// KeyStatus lists version 0 and every version of data_key_versions with the
// sealed values that still need each: the re-seal's progress.
func (s *Sealer) KeyStatus(ctx context.Context, db bun.IDB) ([]VersionStatus, error) {
	var versions []struct {
		Version   int        `bun:"version"`
		CreatedAt time.Time  `bun:"created_at"`
		RetiredAt *time.Time `bun:"retired_at"`
	}
	if err := db.NewRaw("select version, created_at, retired_at from data_key_versions order by version").Scan(ctx, &versions); err != nil {
		return nil, err
	}
	counts, err := rowsByVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	cur := int(s.CurrentVersion())
	out := []VersionStatus{{Version: 0, Rows: counts[0], Current: cur == 0}}
	for _, v := range versions {
		created := v.CreatedAt
		out = append(out, VersionStatus{Version: v.Version, Rows: counts[v.Version], Current: cur == v.Version, CreatedAt: &created, RetiredAt: v.RetiredAt})
	}
	return out, nil
}

func rowsByVersion(ctx context.Context, db bun.IDB) (map[int]int64, error) {
	counts := map[int]int64{}
	for _, c := range sealedColumns {
		var rows []struct {
			Version int   `bun:"version"`
			N       int64 `bun:"n"`
		}
		q := "select " + versionExpr("x.v") + " as version, count(*) as n from (" + c.read + ") x where x.v is not null group by 1"
		if err := db.NewRaw(q).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("merchant: counting %s.%s: %w", c.table, c.column, err)
		}
		for _, r := range rows {
			counts[r.Version] += r.N
		}
	}
	return counts, nil
}

// RetireAfter is how long a newer version must have existed before an
// older one is retired: every running gateway loads a new version within
// its re-seal period (a minute), so none seals under the old one after this.
const RetireAfter = 10 * time.Minute

// RetireUnused erases the wrapped key of every version older than the
// current one that no sealed value names any more, once the current
// version is older than minAge (RetireAfter; 0 in the tests and for an
// operator who knows no older process runs). It returns the versions it
// retired. Version 0, the data key, is never retired: it wraps the others.
func (s *Sealer) RetireUnused(ctx context.Context, db bun.IDB, minAge time.Duration) ([]int, error) {
	st, err := s.KeyStatus(ctx, db)
	if err != nil {
		return nil, err
	}
	var cur *VersionStatus
	for i := range st {
		if st[i].Current {
			cur = &st[i]
		}
	}
	if cur == nil || cur.CreatedAt == nil || time.Since(*cur.CreatedAt) < minAge {
		return nil, nil
	}
	var retired []int
	for _, v := range st {
		if v.Version == 0 || v.Current || v.RetiredAt != nil || v.Version > cur.Version || v.Rows > 0 {
			continue
		}
		if _, err := db.NewRaw("update data_key_versions set wrapped = null, retired_at = now() where version = ? and retired_at is null", v.Version).Exec(ctx); err != nil {
			return retired, err
		}
		retired = append(retired, v.Version)
	}
	return retired, nil
}
