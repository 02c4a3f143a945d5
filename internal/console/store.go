package console

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/postings"
)

// The console's own tables are internal/console/store's (its SQL, in bun
// on the gateway's pool). What a user's merchant is — its shop number,
// name and status — is internal/merchant's, asked through Merchants: the
// console's statements name no table of another package
// (internal/archtest, tableOwners).

// User is a signed-in console user.
type User struct {
	ID         int64
	Login      string
	Role       Role
	MerchantID int64 // 0 for the house's users
	ShopNo     string
	Merchant   string // the merchant's name
}

// userRow is a user as login reads it.
type userRow struct {
	User
	passwordHash string
	totpSealed   []byte
	totpLastStep int64
	failedCount  int
	// disabled: the user, or the user's merchant (merchant_active.go).
	disabled bool
}

// The store's rows under the names the pages use.
type (
	auditEntry = store.AuditEntry
	listedUser = store.ListedUser
)

var errSessionGone = store.ErrSessionGone

// consoleStore is the console's tables and the merchants its users belong to.
type consoleStore struct {
	*store.Store
	merchants Merchants
}

// userInScope is the user of login in a scope: the merchant whose shop
// number is shopNo, or the house's when shopNo is empty. nil when there is
// none; an unknown shop number is a scope with no users.
func (s *consoleStore) userInScope(ctx context.Context, shopNo, login string) (*userRow, error) {
	var scope int64
	if shopNo != "" {
		m, err := s.merchants.MerchantByShopNo(ctx, shopNo)
		switch {
		case postings.ErrorCode(err) == postings.ENOTFOUND:
			// No merchant's id: the lookup below still runs and finds no
			// one, so an unknown shop costs what an unknown login does.
			scope = -1
		case err != nil:
			return nil, err
		default:
			scope = m.ID
		}
	}
	row, err := s.UserInScope(ctx, scope, login)
	return s.withMerchant(ctx, row, err)
}

// userByID is the user with id; nil when there is none.
func (s *consoleStore) userByID(ctx context.Context, id int64) (*userRow, error) {
	row, err := s.UserByID(ctx, id)
	return s.withMerchant(ctx, row, err)
}

// withMerchant completes a user's row with its merchant: its shop number
// and name, and disabled when the merchant is not active.
func (s *consoleStore) withMerchant(ctx context.Context, row *store.UserRow, err error) (*userRow, error) {
	if row == nil || err != nil {
		return nil, err
	}
	u := &userRow{User: User{ID: row.ID, Login: row.Login, Role: Role(row.Role), MerchantID: row.MerchantID},
		passwordHash: row.PasswordHash, totpSealed: row.TOTPSealed, totpLastStep: row.TOTPLastStep,
		failedCount: row.FailedCount, disabled: row.Disabled}
	active, err := s.completeUser(ctx, &u.User)
	u.disabled = u.disabled || !active
	return u, err
}

// touchSession returns the user of a live session and marks it seen now;
// nil when the session is unknown, past its absolute or idle end, or its
// user is disabled; a session of a disabled merchant's user is deleted.
func (s *consoleStore) touchSession(ctx context.Context, hash []byte, now time.Time, idle time.Duration) (*User, error) {
	row, err := s.TouchSession(ctx, hash, now, idle)
	if row == nil || err != nil {
		return nil, err
	}
	u := &User{ID: row.ID, Login: row.Login, Role: Role(row.Role), MerchantID: row.MerchantID}
	active, err := s.completeUser(ctx, u)
	if err != nil {
		return nil, err
	}
	if !active {
		return nil, s.DeleteSession(ctx, hash) // the session ends (merchant_active.go)
	}
	return u, nil
}

// clip cuts s to at most n bytes, on a character boundary.
func clip(s string, n int) string { return store.Clip(s, n) }
