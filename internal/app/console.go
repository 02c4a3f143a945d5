package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
)

// The web console (docs/console.md): its listener, beside the /shop and
// internal ones, and the demo users of make run.

// listenConsole listens for the console on cfg.ConsoleAddr with the API's
// TLS configuration; "off" starts nothing. With Demo, the demo operator
// and the demo merchant's admin are made and printed.
func (a *App) listenConsole(ctx context.Context, stdout io.Writer, tlsCfg *tls.Config, sealer *merchant.Sealer) error {
	addr := a.cfg.ConsoleAddr
	if addr == "" || addr == "off" {
		return nil
	}
	s := a.Services
	// Over cells, a router in front of every cell's console (consolecells.go).
	var h http.Handler
	var err error
	if a.directory != nil {
		h, err = a.consoleOverCells()
	} else {
		h, err = console.New(a.consoleConfig(s, sealer))
	}
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	// The API's bound of connections per client (128 by default,
	// GATEWAY_CONNS_PER_CLIENT_MAX), before TLS so that a refused connection
	// costs no handshake; no proxy is trusted, the console reads none.
	a.consoleLn = httpserve.LimitConnsPerClient(tcp, a.cfg.Limits.ConnsPerClientMax, nil, a.log)
	scheme := "http"
	if tlsCfg != nil {
		a.consoleLn, scheme = tls.NewListener(a.consoleLn, tlsCfg), "https"
	}
	a.closers = append(a.closers, func() { a.consoleLn.Close() })
	// Its own timeouts: a page is quick, but a CSV of a year or an audit
	// verify run from the page is not (the verify is bounded at 10 minutes).
	// A body has the API's deadlines (idle pause, whole body), answered
	// 408 by the console (httpserve.GuardBodyHandler).
	a.console = &http.Server{Handler: httpserve.GuardBodyHandler(h, a.cfg.Limits), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 11 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10}
	fmt.Fprintf(stdout, "console on %s://%s\n", scheme, a.consoleLn.Addr())
	a.log.Info("console started", "addr", a.consoleLn.Addr().String(), "scheme", scheme)
	if a.cfg.Demo {
		if err := ensureDemoConsole(ctx, stdout, a.cfg.DataDir, s, sealer, scheme+"://"+a.consoleLn.Addr().String()); err != nil {
			return fmt.Errorf("demo console users: %w", err)
		}
	}
	return nil
}

// consoleConfig is the console of one cell's services (the one database
// without cells), sealer opening its users' TOTP secrets.
func (a *App) consoleConfig(s *Services, sealer *merchant.Sealer) console.Config {
	return console.Config{DB: s.DB().DB, Sealer: sealer, Log: a.log, Ledger: s.Ledger, Merchants: s.Merchants, Bills: s.Bills, Audit: audit.New(s.Ledger),
		Cards: s.Cards, Deliveries: s.Deliveries, Rates: s.FX, Remittances: s.Remit, Holds: s.Network, Settlements: s.Settlements(), Rail: s.RailEntries(),
		Refunds: s.Refunds(), IdleTimeout: a.cfg.ConsoleIdleTimeout, SessionMax: a.cfg.ConsoleSessionMax,
		LockoutFailures: a.cfg.ConsoleLockoutTries, LockoutFor: a.cfg.ConsoleLockoutFor, AddressFailures: a.cfg.ConsoleAddressTries,
		CallbackAllow: a.cfg.CallbackAllow}
}

// demoConsoleFile keeps the demo console users' passwords and the
// operator's TOTP secret, beside demo-merchant.json.
const demoConsoleFile = "demo-console.json"

type demoConsoleUser struct {
	Login      string `json:"login"`
	Password   string `json:"password"`
	Role       string `json:"role"`
	ShopNo     string `json:"shopNo,omitempty"` // a merchant's user signs in with it (logins are per scope)
	TOTPSecret string `json:"totpSecret,omitempty"`
}

type demoConsole struct {
	URL   string            `json:"url"`
	Users []demoConsoleUser `json:"users"`
}

// ensureDemoConsole makes the demo operator and the demo merchant's admin
// when they are missing, writes their credentials to the data directory
// and prints them: make run's "demo login".
func ensureDemoConsole(ctx context.Context, stdout io.Writer, dataDir string, l *Services, sealer *merchant.Sealer, url string) error {
	path := filepath.Join(dataDir, demoConsoleFile)
	var d demoConsole
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	b, err := os.ReadFile(filepath.Join(dataDir, DemoFile))
	if err != nil {
		return err
	}
	var shop DemoCredentials
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
		known, err := console.HasUser(ctx, l.DB(), w.login, w.merchant)
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
		c, err := console.CreateUser(ctx, l.DB(), sealer, console.NewUser{Login: w.login, Role: w.role, MerchantID: w.merchant, Password: pw})
		if err != nil {
			return err
		}
		shopNo := ""
		if w.merchant != 0 {
			shopNo = shop.ShopNo
		}
		d.Users = append(d.Users, demoConsoleUser{Login: w.login, Password: pw, Role: string(w.role), ShopNo: shopNo, TOTPSecret: c.TOTPSecret})
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
		if u.ShopNo != "" {
			extra = ", shop number " + u.ShopNo
		}
		if u.TOTPSecret != "" {
			extra = fmt.Sprintf(", TOTP secret %s (gateway console totp --secret %s prints the current code)", u.TOTPSecret, u.TOTPSecret)
		}
		fmt.Fprintf(stdout, "console demo login (%s): %s / %s%s\n", u.Role, u.Login, u.Password, extra)
	}
	fmt.Fprintf(stdout, "console demo logins are in %s\n", path)
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
