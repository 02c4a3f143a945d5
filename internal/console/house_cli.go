package console

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/gateway/postings"
)

// The CLI acting as a house user (gateway adjustment …, --as LOGIN): the
// console owns its users and its audit trail, so the lookup and the trail's
// rows are here. A CLI step is in the same trail as the console's, with
// the address "cli".

// HouseUser is the enabled house operator login, for the CLI's --as:
// ENOTFOUND when there is none (a merchant's user, a disabled one, an
// auditor: only operators act on money).
func HouseUser(ctx context.Context, db *sql.DB, login string) (id int64, err error) {
	err = db.QueryRowContext(ctx, `select id from console_users
		where merchant_id is null and login = $1 and role = 'operator' and not disabled`, login).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, &postings.Error{Code: postings.ENOTFOUND, Field: "as", Message: "no enabled house operator with that login"}
	}
	return id, err
}

// AuditCLI writes one row of the console's audit trail for a CLI step.
func AuditCLI(ctx context.Context, db *sql.DB, userID int64, login string, merchant int64, action, target, detail, outcome string) error {
	_, err := insertAudit(ctx, db, auditEntry{At: time.Now().UTC(), UserID: userID, Login: login, Role: string(RoleOperator),
		MerchantID: merchant, Action: action, Target: clip(target, 200), Detail: clip(detail, 1000), Outcome: outcome, Address: "cli"})
	return err
}
