package main

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/gateway/internal/console"
)

// The web console's commands (docs/console.md): `gateway console user
// create` and `gateway console totp`. serve starts the console itself
// (internal/app/console.go).

// cmdConsoleUserCreate creates a console user and prints it as JSON, with
// the TOTP secret of an operator or auditor (shown this once). The password
// is read from a file (as `audit role`'s), so it is not in the shell's
// history or ps.
func cmdConsoleUserCreate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "console user create", "Create a web console user (docs/console.md); prints its TOTP secret once for operators and auditors.")
	login := fs.String("login", "", "the user's login: 3 to 64 of a-z 0-9 . _ @ -")
	role := fs.String("role", "", "admin, finance or readonly (with --shop-no); operator or auditor (without)")
	shopNo := fs.String("shop-no", "", "the merchant of an admin, finance or readonly user")
	passwordFile := fs.String("password-file", "", "a file holding the password (12 to 128 bytes; its last newline is dropped)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	r, ok := console.ParseRole(*role)
	if !ok {
		return usageError("--role must be admin, finance, readonly, operator or auditor")
	}
	if *login == "" || *passwordFile == "" {
		return usageError("--login, --role and --password-file are required")
	}
	pw, err := readPasswordFile(e, *passwordFile)
	if err != nil {
		return err
	}
	s, l, err := openLedger(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	defer l.Close()
	var mid int64
	if *shopNo != "" {
		m, err := l.MerchantByShopNo(ctx, *shopNo)
		if err != nil {
			return cliError(err)
		}
		mid = m.ID
	}
	c, err := console.CreateUser(ctx, l.DB(), l.Sealer(), console.NewUser{Login: *login, Role: r, MerchantID: mid, Password: pw})
	if err != nil {
		return cliError(err)
	}
	return printJSON(e, c)
}

// cmdConsoleTOTP prints the current code of a TOTP secret: for the demo
// operator of make run, without an authenticator app.
func cmdConsoleTOTP(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "console totp", "Print the current TOTP code of a secret (for the demo operator).")
	secret := fs.String("secret", "", "the base32 secret")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	code, err := console.TOTPCode(*secret, time.Now())
	if err != nil {
		return usageError(err.Error())
	}
	fmt.Fprintln(e.stdout, code)
	return nil
}
