package reconcile

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/paygate/gateway/postings"
)

// AuditorRole is the NOLOGIN role that migration 0006 creates and grants
// SELECT on the journal and its views; auditors log in as members of it.
const AuditorRole = "gateway_auditor"

// Limits on an auditor's login.
const (
	auditorPasswordBytesMin = 12
	auditorPasswordBytesMax = 1024
	scramIterations         = 4096 // PostgreSQL's default (scram_iterations)
	scramSaltBytes          = 16
)

var auditorLoginPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreateAuditor creates the LOGIN role login as a member of AuditorRole,
// with password, or, when login is already such an auditor, sets its
// password (a rotation). The role's sessions are read-only by default too.
// The password reaches PostgreSQL only as a SCRAM-SHA-256 verifier made
// here, so it is never in the server's logs or in pg_stat_activity.
//
// Errors: EINVALID (a bad name, a password of other than 12 to 1,024
// printable ASCII characters), ECONFLICT (login exists and is not a plain
// auditor: a superuser, a role with other powers, or not a member).
func CreateAuditor(ctx context.Context, db *sql.DB, login, password string) (created bool, err error) {
	if err := validateAuditor(login, password); err != nil {
		return false, err
	}
	verifier, err := scramVerifier(password, nil)
	if err != nil {
		return false, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	var exists, plainAuditor bool
	err = tx.QueryRowContext(ctx, `
		select true,
		       not (r.rolsuper or r.rolcreaterole or r.rolcreatedb or r.rolreplication or r.rolbypassrls)
		       and exists (select 1 from pg_auth_members am join pg_roles g on g.oid = am.roleid
		                   where am.member = r.oid and g.rolname = $2)
		from pg_roles r where r.rolname = $1`, login, AuditorRole).Scan(&exists, &plainAuditor)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	ddl := `select format('create role %I login password %L in role %I', $1::text, $2::text, $3::text)`
	if exists {
		if !plainAuditor {
			return false, &postings.Error{Code: postings.ECONFLICT, Field: "login",
				Message: fmt.Sprintf("the role %s exists and is not a plain member of %s: choose another name", login, AuditorRole)}
		}
		ddl = `select format('alter role %I login password %L', $1::text, $2::text, $3::text)`
	}
	// DDL takes no parameters: PostgreSQL's format() quotes the name and
	// the verifier.
	for _, q := range []string{ddl, `select format('alter role %I set default_transaction_read_only = on', $1::text, $2::text, $3::text)`} {
		var stmt string
		if err := tx.QueryRowContext(ctx, q, login, verifier, AuditorRole).Scan(&stmt); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, err
		}
	}
	return !exists, tx.Commit()
}

func validateAuditor(login, password string) error {
	if !auditorLoginPattern.MatchString(login) || strings.HasPrefix(login, "pg_") || login == AuditorRole {
		return postings.FieldErrorf("login", "must be 1 to 63 characters of [a-z0-9_], not starting with a digit or pg_, and not %s", AuditorRole)
	}
	if len(password) < auditorPasswordBytesMin || len(password) > auditorPasswordBytesMax {
		return postings.FieldErrorf("password_file", "the password must be %d to %d characters", auditorPasswordBytesMin, auditorPasswordBytesMax)
	}
	for i := 0; i < len(password); i++ {
		// Printable ASCII is what SASLprep leaves as it is, so the verifier
		// made here is the one PostgreSQL would make.
		if password[i] < 0x20 || password[i] > 0x7e {
			return postings.FieldErrorf("password_file", "the password must be printable ASCII (byte %d is not)", i+1)
		}
	}
	return nil
}

// scramVerifier is the SCRAM-SHA-256 verifier of password as PostgreSQL
// stores it (RFC 5802, RFC 7677): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
// A nil salt is a random one.
func scramVerifier(password string, salt []byte) (string, error) {
	if salt == nil {
		salt = make([]byte, scramSaltBytes)
		if _, err := rand.Read(salt); err != nil {
			return "", err
		}
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return "", err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(storedKey[:]), b64(serverKey)), nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
