package reconcile_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a ledger on a fresh database with a clock the test moves.
type fixture struct {
	l    *gatewaytest.Gateway
	db   *bun.DB
	url  string
	now  atomic.Pointer[time.Time]
	msgs atomic.Int64
}

// fixtureStart is the fixture's first instant: a fixed date, so that
// statement periods are days the test knows.
var fixtureStart = time.Date(2030, 3, 1, 8, 0, 0, 0, time.UTC)

// newFixture is a ledger built like ledger/ledger_test.go's newLedger, with
// the fixture's clock and fresh FX rates.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{url: pgtest.NewDatabase(t)}
	f.now.Store(&fixtureStart)
	db, err := database.OpenDB(context.Background(), f.url, database.DBOptions{ConnsMax: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	f.l = gatewaytest.New(t, db, gatewaytest.Options{Ledger: ledger.Config{Now: func() time.Time { return *f.now.Load() }}})
	f.refreshRates(t)
	return f
}

// advance moves the clock and keeps the FX rates younger than their
// maximum age.
func (f *fixture) advance(t *testing.T, d time.Duration) {
	t.Helper()
	next := f.now.Load().Add(d)
	f.now.Store(&next)
	f.refreshRates(t)
}

func (f *fixture) refreshRates(t *testing.T) {
	t.Helper()
	for _, r := range []struct{ base, quote, mid string }{{"USD", "EUR", "0.92"}, {"EUR", "USD", "1.087"}} {
		if _, err := f.l.FX.Set(context.Background(), r.base, r.quote, r.mid, 50); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) msg() string { return fmt.Sprintf("msg-%d", f.msgs.Add(1)) }

func (f *fixture) merchant(t *testing.T, currencies ...string) *merchant.Merchant {
	t.Helper()
	m, _, err := f.l.CreateMerchant(context.Background(), merchant.Spec{Name: "Test shop", Currencies: currencies})
	if err != nil {
		t.Fatalf("CreateMerchant: %v", err)
	}
	return m
}

func (f *fixture) deposit(t *testing.T, m int64, cur string, minor int64) {
	t.Helper()
	if _, err := f.l.Deposit(context.Background(), m, cur, minor, nil); err != nil {
		t.Fatalf("Deposit: %v", err)
	}
}

// fundedMerchant is a merchant of one currency with minor units of it
// deposited: where most of the journal's tests start.
func (f *fixture) fundedMerchant(t *testing.T, cur string, minor int64) *merchant.Merchant {
	t.Helper()
	m := f.merchant(t, cur)
	f.deposit(t, m.ID, cur, minor)
	return m
}

// bins are the seeded VISA BINs per currency (sql/0002_cards.sql).
var bins = map[string]string{"USD": "453201", "EUR": "453202"}

func (f *fixture) card(t *testing.T, m int64, cur string, minor int64) *cards.Card {
	t.Helper()
	c, err := f.l.Cards.CreateCard(context.Background(), m, cards.CreateCardInput{Bin: bins[cur], Currency: cur, Amount: minor}, nil)
	if err != nil {
		t.Fatalf("CreateCard: %v", err)
	}
	return c
}

// authorize makes an authorization that must be approved.
func (f *fixture) authorize(t *testing.T, card string, minor int64, cur string) *network.AuthResult {
	t.Helper()
	res, err := f.l.Network.Authorize(context.Background(), network.AuthRequest{MessageID: f.msg(), CardNo: card, Amount: minor,
		Currency: cur, MerchantName: "Coffee", MCC: "5814", MerchantCountry: "US"})
	if err != nil || !res.Approved {
		t.Fatalf("Authorize: %+v, %v", res, err)
	}
	return res
}

// clear clears an authorization and returns the clearing's message id.
func (f *fixture) clear(t *testing.T, authID string, minor int64) string {
	t.Helper()
	msg := f.msg()
	if _, err := f.l.Network.Clear(context.Background(), network.ClearRequest{MessageID: msg, AuthID: authID, Amount: minor}); err != nil {
		t.Fatalf("Clear: %v", err)
	}
	return msg
}

// tamper runs a statement on the journal with the append-only triggers off,
// as a superuser could (the test database's user is one).
func (f *fixture) tamper(t *testing.T, query string, args ...any) {
	t.Helper()
	ctx := context.Background()
	triggers := []string{"entries_append_only", "postings_append_only", "bill_lines_append_only"}
	tables := []string{"entries", "postings", "bill_lines"}
	for i := range tables {
		if _, err := f.db.ExecContext(ctx, "alter table "+tables[i]+" disable trigger "+triggers[i]); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.db.ExecContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("tamper: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tamper changed %d rows, want 1", n)
	}
	for i := range tables {
		if _, err := f.db.ExecContext(ctx, "alter table "+tables[i]+" enable trigger "+triggers[i]); err != nil {
			t.Fatal(err)
		}
	}
}
