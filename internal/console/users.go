package console

import (
	"context"
	"regexp"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/store"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// NewUser is a user to create (gateway console user create).
type NewUser struct {
	Login      string
	Role       Role
	MerchantID int64 // a merchant's user; 0 for operator and auditor
	Password   string
}

// Created is what creating a user gives once: the TOTP secret (empty when
// the role signs in without one) and its otpauth URI.
type Created struct {
	ID         int64  `json:"id"`
	Login      string `json:"login"`
	Role       Role   `json:"role"`
	TOTPSecret string `json:"totpSecret,omitempty"`
	TOTPURI    string `json:"totpUri,omitempty"`
}

var loginRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._@-]{2,63}$`)

// CreateUser checks and stores a user: the password hashed with argon2id,
// the TOTP secret (for operators and auditors) sealed under the data key.
// db is the pool, or the transaction that writes the user's audit row with
// it (users_admin.go).
func CreateUser(ctx context.Context, db bun.IDB, sealer *merchant.Sealer, u NewUser) (*Created, error) {
	if !loginRE.MatchString(u.Login) {
		return nil, postings.FieldErrorf("login", "must be 3 to 64 of a-z 0-9 . _ @ -, starting with a letter or digit")
	}
	if _, ok := ParseRole(string(u.Role)); !ok {
		return nil, postings.FieldErrorf("role", "must be admin, finance, readonly, operator or auditor")
	}
	if u.Role.merchantRole() != (u.MerchantID != 0) {
		return nil, postings.FieldErrorf("role", "admin, finance and readonly belong to a merchant; operator and auditor to none")
	}
	if err := auth.CheckPasswordRules(u.Password); err != nil {
		return nil, err
	}
	hash, err := auth.HashPassword(u.Password)
	if err != nil {
		return nil, err
	}
	out := &Created{Login: u.Login, Role: u.Role}
	var sealed []byte
	if u.Role.needsTOTP() {
		if sealer == nil {
			return nil, postings.Errorf(postings.EINTERNAL, "no data key to seal the TOTP secret")
		}
		if out.TOTPSecret, err = auth.NewTOTPSecret(); err != nil {
			return nil, err
		}
		out.TOTPURI = auth.TOTPURI(u.Login, out.TOTPSecret)
		sealed = sealer.Seal([]byte(out.TOTPSecret), totpContext(u.Login))
	}
	out.ID, err = store.InsertUser(ctx, db, store.NewUserRow{Login: u.Login, MerchantID: u.MerchantID, Role: string(u.Role),
		PasswordHash: hash, TOTPSealed: sealed})
	if err == nil && out.ID == 0 {
		// Logins are unique per scope (sql/0017): this is one of the same
		// merchant's (or the house's), which the creator can list anyway;
		// another scope's user of that login is no conflict and so is never
		// revealed.
		return nil, postings.Errorf(postings.ECONFLICT, "a console user %s exists in this scope", u.Login)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// totpContext binds a sealed secret to its user: a sealed value copied to
// another row does not open.
func totpContext(login string) string { return "console-totp:" + login }

// HasUser tells whether a console user of login exists in a scope: the
// merchant's (merchant > 0) or the house's (0). For the demo set-up, which
// makes its users once.
func HasUser(ctx context.Context, db bun.IDB, login string, merchant int64) (bool, error) {
	return store.HasUser(ctx, db, login, merchant)
}
