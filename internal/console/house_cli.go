package console

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/postings"
)

// The CLI acting as a house user (gateway adjustment …, --as LOGIN): the
// console owns its users and its audit trail, so the lookup and the trail's
// rows are its store's. A CLI step is in the same trail as the console's,
// with the address "cli".

// HouseUser is the enabled house operator login, for the CLI's --as:
// ENOTFOUND when there is none (a merchant's user, a disabled one, an
// auditor: only operators act on money).
func HouseUser(ctx context.Context, db bun.IDB, login string) (id int64, err error) {
	id, err = store.HouseOperator(ctx, db, login)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, &postings.Error{Code: postings.ENOTFOUND, Field: "as", Message: "no enabled house operator with that login"}
	}
	return id, err
}

// AuditCLI writes one row of the console's audit trail for a CLI step.
func AuditCLI(ctx context.Context, db bun.IDB, userID int64, login string, merchant int64, action, target, detail, outcome string) error {
	_, err := store.InsertAudit(ctx, db, store.AuditEntry{At: time.Now().UTC(), UserID: userID, Login: login, Role: string(RoleOperator),
		MerchantID: merchant, Action: action, Target: clip(target, 200), Detail: clip(detail, 1000), Outcome: outcome, Address: "cli"})
	return err
}
