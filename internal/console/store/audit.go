package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// AuditEntry is one row of the console's audit trail.
type AuditEntry struct {
	ID         int64     `bun:"id"`
	At         time.Time `bun:"at"`
	UserID     int64     `bun:"user_id"`
	Login      string    `bun:"login"`
	Role       string    `bun:"role"`
	MerchantID int64     `bun:"merchant_id"`
	Action     string    `bun:"action"`
	Target     string    `bun:"target"`
	Detail     string    `bun:"detail"`
	Outcome    string    `bun:"outcome"`
	Address    string    `bun:"address"`
	ErrorCode  string    `bun:"error_code"` // a failed domain command's postings.Code
	// Shown is the outcome as the trail page says it: "unknown" for a row
	// pending too long (the console's audit_intent.go).
	Shown string `bun:"-"`
}

// InsertAudit writes e through db (the pool, or an action's transaction)
// and gives the row's id. Its values are the caller's to make safe.
func InsertAudit(ctx context.Context, db bun.IDB, e AuditEntry) (int64, error) {
	var id int64
	err := db.NewRaw(`insert into console_audit (at, user_id, login, role, merchant_id, action, target, detail, outcome, address)
		values (?0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) returning id`,
		e.At, e.UserID, e.Login, e.Role, nullID(e.MerchantID), e.Action, e.Target, e.Detail, e.Outcome, e.Address).Scan(ctx, &id)
	return id, err
}

// Audit writes e through the pool.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	_, err := InsertAudit(ctx, s.db, e)
	return err
}

// AuditTrail lists the newest entries with id below before (0: the newest).
func (s *Store) AuditTrail(ctx context.Context, before int64, limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.db.NewRaw(`select id, at, user_id, login, role, coalesce(merchant_id, 0) as merchant_id, action, target, detail,
		       outcome, address, error_code
		from console_audit where (?0 = 0 or id < ?0) order by id desc limit ?1`, before, limit).Scan(ctx, &out)
	return out, err
}

// ErrNotPending is a resolve that found no pending row of that id.
var ErrNotPending = errors.New("console audit: the row is not pending")

// ResolveAudit sets the outcome of the pending row id, once (sql/0018 lets
// exactly this change through).
func (s *Store) ResolveAudit(ctx context.Context, id int64, outcome, code string, merchant int64, target, detail string, at time.Time) error {
	n, err := rowsOf(s.db.NewRaw(`update console_audit
		set outcome = ?1, error_code = ?2, merchant_id = coalesce(merchant_id, ?3), target = case when target = '' then ?4 else target end,
		    detail = ?5, resolved_at = ?6
		where id = ?0 and outcome = 'pending'`, id, outcome, code, nullID(merchant), target, detail, at).Exec(ctx))
	if err == nil && n != 1 {
		err = ErrNotPending
	}
	return err
}

// LastLoad is when and by whom the latest successful action on target was
// recorded; zero when none was (the sanctions page: who loaded a list's
// version from the console). The partial index console_audit_sanctions_idx
// holds the loads only.
func (s *Store) LastLoad(ctx context.Context, action, target string) (at time.Time, login string, err error) {
	err = s.db.NewRaw(`select at, login from console_audit
		where action = ?0 and outcome = 'ok' and target = ?1 order by id desc limit 1`, action, target).Scan(ctx, &at, &login)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, "", nil
	}
	return at, login, err
}

// AuditRowError is the failure to write an atomic action's own row: the
// transaction was rolled back, the action did not happen.
type AuditRowError struct{ Err error }

func (e *AuditRowError) Error() string { return "console audit row: " + e.Err.Error() }
func (e *AuditRowError) Unwrap() error { return e.Err }

// Atomically runs fn and writes e in one transaction: the action on the
// console's own tables and its row are committed together or not at all.
func (s *Store) Atomically(ctx context.Context, e AuditEntry, fn func(bun.IDB) error) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if _, err := InsertAudit(ctx, tx, e); err != nil {
			return &AuditRowError{err}
		}
		return nil
	})
}

// HouseOperator is the id of the enabled house operator login (the CLI's
// --as): sql.ErrNoRows when there is none (a merchant's user, a disabled
// one, an auditor: only operators act on money).
func HouseOperator(ctx context.Context, db bun.IDB, login string) (id int64, err error) {
	err = db.NewRaw(`select id from console_users
		where merchant_id is null and login = ? and role = 'operator' and not disabled`, login).Scan(ctx, &id)
	return id, err
}
