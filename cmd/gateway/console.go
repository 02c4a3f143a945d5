package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/ledger"
)

// The web console (docs/console.md): its listener, started by serve, its
// demo users, and `gateway console user create`.

// consoleAddrDefault is loopback: the console is for people on this
// machine, or behind a proxy the operator sets up on purpose.
const consoleAddrDefault = "127.0.0.1:8445"

type consoleListener struct {
	srv  *http.Server
	addr string
	errc chan error
}

// startConsole serves the console on addr with the API's TLS
// configuration; an empty addr or "off" starts nothing.
func startConsole(e *env, addr string, tlsCfg *tls.Config, l *services, sealer *ledger.Sealer) (*consoleListener, error) {
	cl := &consoleListener{errc: make(chan error, 1)}
	if addr == "" || addr == "off" {
		return cl, nil
	}
	h, err := console.New(console.Config{DB: l.DB().DB, Sealer: sealer, Log: e.log, Ledger: l.Ledger,
		Cards: l.cards, Deliveries: l.delivery, Rates: l.fx})
	if err != nil {
		return nil, err
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	ln := tcp
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(tcp, tlsCfg), "https"
	}
	// Its own timeouts: a page is quick, but a CSV of a year or an audit
	// verify run from the page is not (the verify is bounded at 10 minutes).
	cl.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 11 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10}
	cl.addr = ln.Addr().String()
	fmt.Fprintf(e.stdout, "console on %s://%s\n", scheme, ln.Addr())
	e.log.Info("console started", "addr", ln.Addr().String(), "scheme", scheme)
	go func() {
		if err := cl.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cl.errc <- fmt.Errorf("console: %w", err)
		}
	}()
	return cl, nil
}

func (cl *consoleListener) stop() {
	if cl.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = cl.srv.Shutdown(ctx)
}

// demoConsoleFile keeps the demo console users' passwords and the
// operator's TOTP secret, beside demo-merchant.json.
const demoConsoleFile = "demo-console.json"

type demoConsoleUser struct {
	Login      string `json:"login"`
	Password   string `json:"password"`
	Role       string `json:"role"`
	TOTPSecret string `json:"totpSecret,omitempty"`
}

type demoConsole struct {
	URL   string            `json:"url"`
	Users []demoConsoleUser `json:"users"`
}

// ensureDemoConsole makes the demo operator and the demo merchant's admin
// when they are missing, writes their credentials to the data directory
// and prints them: make run's "demo login".
func ensureDemoConsole(ctx context.Context, e *env, l *services, sealer *ledger.Sealer, url string) error {
	path := filepath.Join(dataDir(e), demoConsoleFile)
	var d demoConsole
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	b, err := os.ReadFile(filepath.Join(dataDir(e), demoFile))
	if err != nil {
		return err
	}
	var shop demoCredentials
	if err := json.Unmarshal(b, &shop); err != nil {
		return err
	}
	m, err := l.MerchantByShopNo(ctx, shop.ShopNo)
	if err != nil {
		return err
	}
	want := []struct {
		login    string
		role     console.Role
		merchant int64
	}{{"demo-operator", console.RoleOperator, 0}, {"demo-admin", console.RoleAdmin, m.ID}}
	for _, w := range want {
		var known bool
		err := l.DB().DB.QueryRowContext(ctx, `select exists (select 1 from console_users where login = $1)`, w.login).Scan(&known)
		if err != nil {
			return err
		}
		if known && hasDemoUser(d, w.login) {
			continue
		}
		if known {
			// In the database but not in the file (a file from another
			// data directory): its password is lost; leave it.
			continue
		}
		pw, err := randomPassword()
		if err != nil {
			return err
		}
		c, err := console.CreateUser(ctx, l.DB().DB, sealer, console.NewUser{Login: w.login, Role: w.role, MerchantID: w.merchant, Password: pw})
		if err != nil {
			return err
		}
		d.Users = append(d.Users, demoConsoleUser{Login: w.login, Password: pw, Role: string(w.role), TOTPSecret: c.TOTPSecret})
	}
	d.URL = url
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o600); err != nil {
		return err
	}
	for _, u := range d.Users {
		extra := ""
		if u.TOTPSecret != "" {
			extra = fmt.Sprintf(", TOTP secret %s (gateway console totp --secret %s prints the current code)", u.TOTPSecret, u.TOTPSecret)
		}
		fmt.Fprintf(e.stdout, "console demo login (%s): %s / %s%s\n", u.Role, u.Login, u.Password, extra)
	}
	fmt.Fprintf(e.stdout, "console demo logins are in %s\n", path)
	return nil
}

func hasDemoUser(d demoConsole, login string) bool {
	for _, u := range d.Users {
		if u.Login == login {
			return true
		}
	}
	return false
}

func randomPassword() (string, error) {
	s, err := console.NewTOTPSecret() // 160 random bits in base32
	return strings.ToLower(s[:20]), err
}

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
	defer s.close()
	defer l.Close()
	var mid int64
	if *shopNo != "" {
		m, err := l.MerchantByShopNo(ctx, *shopNo)
		if err != nil {
			return cliError(err)
		}
		mid = m.ID
	}
	c, err := console.CreateUser(ctx, l.DB().DB, l.Sealer(), console.NewUser{Login: *login, Role: r, MerchantID: mid, Password: pw})
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
