package cellmove

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// twoCells is a source cell with a merchant on the gateway's own domains
// and an empty target cell, both fresh databases of the test server.
type twoCells struct {
	src, dst *bun.DB
	sealer   *merchant.Sealer
	g        *gatewaytest.Gateway // on src
	m        *merchant.Merchant
	dir      *LocalDirectory
	mv       *Mover
}

func newTwoCells(t *testing.T) *twoCells {
	t.Helper()
	c := &twoCells{src: pgtest.NewDB(t), dst: pgtest.NewDB(t), sealer: gatewaytest.NewSealer(t), dir: NewLocalDirectory()}
	// Each cell's identities start in their own range (docs/scaling.md):
	// the target's at 10¹², so that the ids a copy keeps never meet the
	// target's own.
	restartIdentities(t, c.dst, 1_000_000_000_000)
	c.g = gatewaytest.New(t, c.src, gatewaytest.Options{Sealer: c.sealer})
	c.m = gatewaytest.Merchant(t, c.g, "USD", "EUR")
	c.dir.Place(c.m.ShopNo, "a")
	c.mv = &Mover{From: Cell{Name: "a", DB: c.src}, To: Cell{Name: "b", DB: c.dst}, Dir: c.dir}
	return c
}

func restartIdentities(t *testing.T, db *bun.DB, at int64) {
	t.Helper()
	ctx := context.Background()
	var cols []struct {
		Tbl string
		Col string
	}
	if err := db.NewRaw(`select c.relname as tbl, a.attname as col from pg_attribute a join pg_class c on c.oid = a.attrelid
		join pg_namespace n on n.oid = c.relnamespace
		where n.nspname = current_schema() and a.attidentity <> '' and c.relkind = 'r'`).Scan(ctx, &cols); err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("alter table %s alter column %s restart with %d", quoteIdent(c.Tbl), quoteIdent(c.Col), at)); err != nil {
			t.Fatal(err)
		}
	}
}

var keySeq atomic.Int64

func idem(scope string) *ledger.Idempotency {
	return &ledger.Idempotency{Scope: scope, Key: fmt.Sprintf("key-%d", keySeq.Add(1))}
}

// business gives the merchant of g some of everything: deposits under
// idempotency keys, a card with a hold on it, a remittance with its fee
// and history, events and their deliveries, bill lines.
func business(t *testing.T, g *gatewaytest.Gateway, m int64) {
	t.Helper()
	ctx := context.Background()
	for _, cur := range []string{"USD", "EUR"} {
		if _, err := g.Deposit(ctx, m, cur, 10_000_00, idem(ledger.ScopeLedger)); err != nil {
			t.Fatal(err)
		}
	}
	card, err := g.Cards.CreateCard(ctx, m, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 200_00, CallbackURL: "https://shop.example/cb"}, idem(ledger.ScopeShop))
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.Network.Authorize(ctx, network.AuthRequest{MessageID: fmt.Sprintf("msg-%d", keySeq.Add(1)), CardNo: card.CardNo, Amount: 12_34, Currency: "USD"})
	if err != nil || !r.Approved {
		t.Fatalf("authorize: %+v %v", r, err)
	}
	b, _ := json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE", "bank_swift": "COBADEFFXXX",
		"account_no": "DE89370400440532013000"})
	if _, err := g.Remit.CreateRemittance(ctx, m, remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: b,
		Amount: 100_00, Fee: 50, Currency: "EUR", Purpose: "SUPP", Rail: "SEPA"}, idem(ledger.ScopeShop)); err != nil {
		t.Fatal(err)
	}
}
