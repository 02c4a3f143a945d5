package cellaudit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// cellWithCards is a cell's database with one merchant of n cards, sealed
// under sealer's data key (every cell has the same one).
func cellWithCards(t *testing.T, name string, n int, g0 *gatewaytest.Gateway) (Cell, *gatewaytest.Gateway, []string) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	o := gatewaytest.Options{}
	if g0 != nil {
		o.Sealer = g0.Merchants.Sealer()
	}
	g := gatewaytest.New(t, db, o)
	m := gatewaytest.Merchant(t, g, "USD")
	gatewaytest.Deposit(t, g.Ledger, m.ID, "USD", 1000_00)
	var nos []string
	for i := range n {
		c, err := g.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00},
			&ledger.Idempotency{Scope: ledger.ScopeShop, Key: fmt.Sprintf("%s-card-%d", name, i)})
		if err != nil {
			t.Fatal(err)
		}
		nos = append(nos, c.CardNo)
	}
	return Cell{Name: name, DB: db}, g, nos
}

// The PAN fingerprints of two cells are merged in order, a page of each
// cell at a time (pages of 2 here, over 5 cards a cell): nothing found
// while every fingerprint is in one cell; a fingerprint planted in the
// other cell is found, naming both cards and cells; the same planted card
// of a moving merchant is not a duplicate. Every page read holds at most
// cardPage cards, and every card is read once.
func TestDuplicateCardsMergesPages(t *testing.T) {
	ctx := context.Background()
	a, ga, aCards := cellWithCards(t, "a1", 5, nil)
	b, _, bCards := cellWithCards(t, "b2", 5, ga)
	defer func(n int) { cardPage, pageHeld = n, nil }(cardPage)
	cardPage = 2
	var mu sync.Mutex
	read := map[string]int{}
	pageHeld = func(cell string, n int) {
		mu.Lock()
		defer mu.Unlock()
		if n > cardPage {
			t.Errorf("a page of cell %s holds %d cards, more than %d", cell, n, cardPage)
		}
		read[cell] += n
	}
	// a1's merchant and b2's have the same id here (fresh databases): the
	// planted card counts as the same merchant's, which only a move excuses.
	var merchantA int64
	if err := a.DB.NewRaw("select merchant_id from cards where card_no = ?", aCards[3]).Scan(ctx, &merchantA); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant bool
		byID  map[int64]cells.Entry
		want  []string
	}{
		{name: "each fingerprint in one cell"},
		{name: "a1's fingerprint planted in b2", plant: true,
			want: []string{fmt.Sprintf("duplicate cell=b2: a PAN fingerprint is in two cells: card %s of merchant %d in a1, card %s of merchant %d in b2",
				aCards[3], merchantA, bCards[1], merchantA)}},
		{name: "the same card while its merchant moves", plant: true,
			byID: map[int64]cells.Entry{merchantA: {MerchantID: merchantA, Cell: "a1", State: cells.StateMoving}}},
	} {
		if tc.plant {
			var fp []byte
			if err := a.DB.NewRaw("select pan_fingerprint from cards where card_no = ?", aCards[3]).Scan(ctx, &fp); err != nil {
				t.Fatal(err)
			}
			if _, err := b.DB.NewRaw("update cards set pan_fingerprint = ? where card_no = ?", fp, bCards[1]).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		clear(read)
		ps, err := duplicateCards(ctx, tc.byID, []Cell{a, b}, map[string]cellRows{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: found\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
		if read["a1"] != 5 || read["b2"] != 5 {
			t.Errorf("%s: cards read %v, want each cell's 5 once", tc.name, read)
		}
	}
}
