package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
)

// The console on a fresh database, with two merchants (A with cards and a
// history; B with one card), a user of every role, and a clock the test
// moves (sessions and lockouts end by it; no test waits on real time).

const password = "correct horse battery" // every fixture user's

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	g            *gatewaytest.Gateway
	srv          *httptest.Server
	clock        *clock
	a, b         *merchant.Merchant
	cardsA       []string
	cardB        string
	secrets      map[string]string // login -> TOTP secret
	deposits     int               // funding lines of A besides its cards'
	lockFailures int
	console      *console.Server
	audit        *gatedAudit // the console's audit: a test may hold its Verify
}

func newFixture(t *testing.T) *fixture { t.Helper(); return newFixtureWith(t, nil) }

// newFixtureWith is newFixture with the console's configuration changed by
// configure (nil: as it is), and the handler the server serves wrapped by
// wrap (nil: as it is).
func newFixtureWith(t *testing.T, configure func(*console.Config), wrap ...func(http.Handler) http.Handler) *fixture {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(console.UseCheapHashes())
	g := gatewaytest.New(t, nil, gatewaytest.Options{})
	f := &fixture{g: g, clock: &clock{t: time.Now().UTC()}, secrets: map[string]string{}, lockFailures: 5}
	mk := func(name string) *merchant.Merchant {
		m, _, err := g.CreateMerchant(ctx, merchant.Spec{Name: name, Currencies: []string{"USD", "EUR"},
			CallbackURL: "https://127.0.0.1:9/callbacks"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	f.a, f.b = mk("Acme Shop"), mk("Bolt Shop")
	for i := 0; i < 6; i++ {
		gatewaytest.Deposit(t, g.Ledger, f.a.ID, "USD", 100_000)
		f.deposits++
	}
	gatewaytest.Deposit(t, g.Ledger, f.a.ID, "EUR", 250_050)
	gatewaytest.Deposit(t, g.Ledger, f.b.ID, "USD", 100_000)
	for _, amt := range []int64{12_345, 5_000} {
		c, err := g.Cards.CreateCard(ctx, f.a.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: amt}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.cardsA = append(f.cardsA, c.CardNo)
	}
	c, err := g.Cards.CreateCard(ctx, f.b.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.cardB = c.CardNo

	db := g.DB().DB
	users := []console.NewUser{
		{Login: "ann.admin", Role: console.RoleAdmin, MerchantID: f.a.ID},
		{Login: "fred.finance", Role: console.RoleFinance, MerchantID: f.a.ID},
		{Login: "rita.readonly", Role: console.RoleReadonly, MerchantID: f.a.ID},
		{Login: "bob.admin", Role: console.RoleAdmin, MerchantID: f.b.ID},
		{Login: "olga.operator", Role: console.RoleOperator},
		{Login: "aldo.auditor", Role: console.RoleAuditor},
	}
	for _, u := range users {
		f.addUser(t, u)
	}
	f.audit = &gatedAudit{Service: audit.New(g.Ledger)}
	cfg := console.Config{DB: db, Sealer: g.Sealer(), Ledger: g.Ledger, Merchants: g.Merchants, Bills: g.Bills, Audit: f.audit, Cards: g.Cards,
		Deliveries: g.Deliveries, Rates: g.FX, Remittances: g.Remit, Holds: g.Network, Settlements: g.Settlements(), Rail: g.RailEntries(), Refunds: g.Refunds(), Now: f.clock.Now, LockoutFailures: f.lockFailures}
	if configure != nil {
		configure(&cfg)
	}
	h, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.console = h
	var served http.Handler = h
	for _, w := range wrap {
		served = w(served)
	}
	f.srv = httptest.NewTLSServer(served)
	t.Cleanup(f.srv.Close)
	return f
}

// addUser creates the console user u with the fixture's password and keeps
// its TOTP secret (f.code): the fixture's users, and a test's second
// operator for maker–checker.
func (f *fixture) addUser(t *testing.T, u console.NewUser) {
	t.Helper()
	u.Password = password
	cr, err := console.CreateUser(context.Background(), f.g.DB(), f.g.Sealer(), u)
	if err != nil {
		t.Fatalf("CreateUser %s: %v", u.Login, err)
	}
	f.secrets[u.Login] = cr.TOTPSecret
}

// code is the user's current TOTP code by the fixture's clock.
func (f *fixture) code(t *testing.T, login string) string {
	t.Helper()
	c, err := console.TOTPCode(f.secrets[login], f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) url(path string) string { return f.srv.URL + path }

// cardStatus reads a card's status from the database.
func (f *fixture) cardStatus(t *testing.T, cardNo string) string {
	t.Helper()
	var s string
	if err := f.g.DB().DB.QueryRow(`select status from cards where card_no = $1`, cardNo).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// auditActions lists the console audit trail's actions, oldest first.
func (f *fixture) auditActions(t *testing.T) []string {
	t.Helper()
	return f.column(t, `select action || ':' || outcome from console_audit order by id`)
}

// column is the one text column of query's rows.
func (f *fixture) column(t *testing.T, query string, args ...any) []string {
	t.Helper()
	rows, err := f.g.DB().DB.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shopOf is the shop number of the merchant of the user login ("" for a
// house user or an unknown login); the tests make no two users of one
// login but where they say so.
func (f *fixture) shopOf(t *testing.T, login string) string {
	t.Helper()
	var shop string
	err := f.g.DB().DB.QueryRow(`select coalesce(min(m.shop_no), '') from console_users u
		left join merchants m on m.id = u.merchant_id where u.login = $1`, login).Scan(&shop)
	if err != nil {
		t.Fatal(err)
	}
	return shop
}
