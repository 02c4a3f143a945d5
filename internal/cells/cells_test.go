package cells_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestOfID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   string
		cell string
		ok   bool
	}{
		{"crd_a1xxxxxxxxxxxxxxxxxx", "a1", true},
		{"auth_eu0000000000000000000", "eu", true},
		{"crd_1axxxxxxxxxxxxxxxxxx", "", false}, // a name starts with a letter
		{"crd_a1", "", false},                   // nothing after the cell
		{"rmt_b2xxxxxxxxxxxxxxxxxx", "b2", true},
		{"rmt_2bxxxxxxxxxxxxxxxxxx", "", false},
		{"txn_a1xxxxxxxxxxxxxxxxxx", "", false},
		{"", "", false},
	} {
		cell, ok := cells.OfID(tc.id)
		if ok != tc.ok || (ok && cell != tc.cell) {
			t.Errorf("OfID(%q) = %q, %v; want %q, %v", tc.id, cell, ok, tc.cell, tc.ok)
		}
	}
}

// A database made a cell mints what carries the cell: shop numbers whose
// first digit is its number, merchant ids in its range, card and
// authorization and remittance ids with its name in place of their first
// two random characters. Without cells, the same services mint as they
// always did.
func TestCellMintsItsIds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		cell    cells.Identity
		shopRe  string
		cardRe  string
		authRe  string
		remitRe string
		idRange [2]int64
	}{
		{"cell b2", cells.Identity{Name: "b2", Number: 2}, `^SH2\d{9}$`, `^crd_b2[a-z0-9]{18}$`, `^auth_b2[a-z0-9]{18}$`,
			`^rmt_b2[a-z0-9]{18}$`, [2]int64{2 * merchant.CellIDSpan, 3 * merchant.CellIDSpan}},
		{"no cells", cells.Identity{}, `^SH[1-9]\d{9}$`, `^crd_[a-z0-9]{20}$`, `^auth_[a-z0-9]{20}$`, `^rmt_[a-z0-9]{20}$`,
			[2]int64{1, merchant.CellIDSpan}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewDB(t)
			if tc.cell.Name != "" {
				if err := cells.Init(ctx, db, tc.cell); err != nil {
					t.Fatal(err)
				}
				if _, err := cells.Check(ctx, db, tc.cell.Name); err != nil {
					t.Fatal(err)
				}
			} else if _, ok, err := cells.ReadIdentity(ctx, db); ok || err != nil {
				t.Fatalf("a fresh database is a cell: %v %v", ok, err)
			}
			sealer := gatewaytest.NewSealer(t)
			g := gatewaytest.New(t, db, gatewaytest.Options{CellName: tc.cell.Name, CellNumber: tc.cell.Number, Sealer: sealer})
			m, creds, err := g.CreateMerchant(ctx, merchant.Spec{Name: "Cell shop", Currencies: []string{"USD"}})
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.shopRe).MatchString(creds.ShopNo) || m.ID < tc.idRange[0] || m.ID >= tc.idRange[1] {
				t.Errorf("shop %s, id %d; want %s and an id in %v", creds.ShopNo, m.ID, tc.shopRe, tc.idRange)
			}
			gatewaytest.Deposit(t, g.Ledger, m.ID, "USD", 100_00)
			card, err := g.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 50_00}, nil)
			if err != nil {
				t.Fatal(err)
			}
			auth, err := g.Network.Authorize(ctx, network.AuthRequest{MessageID: "m-1", CardNo: card.CardNo, Amount: 1_00, Currency: "USD"})
			if err != nil || !auth.Approved {
				t.Fatalf("Authorize: %+v %v", auth, err)
			}
			beneficiary := json.RawMessage(`{"name":"Hans Muster GmbH","country":"DE","bank_swift":"COBADEFFXXX","account_no":"DE89370400440532013000"}`)
			rmt, err := g.Remit.CreateRemittance(ctx, m.ID, remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: beneficiary,
				Amount: 10_00, Currency: "USD", Rail: "SWIFT"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.cardRe).MatchString(card.CardNo) || !regexp.MustCompile(tc.authRe).MatchString(auth.AuthID) ||
				!regexp.MustCompile(tc.remitRe).MatchString(rmt.TxID) {
				t.Errorf("card %s, authorization %s, remittance %s; want %s, %s, %s", card.CardNo, auth.AuthID, rmt.TxID, tc.cardRe, tc.authRe, tc.remitRe)
			}
			// The PAN is from the cell's account range: the digit after the BIN.
			var sealed []byte
			if err := db.NewRaw("select pan_sealed from cards where card_no = ?", card.CardNo).Scan(ctx, &sealed); err != nil {
				t.Fatal(err)
			}
			pan, err := sealer.Open(sealed, "pan:"+card.CardNo)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cell.Number > 0 && (len(pan) != 16 || pan[6] != byte('0'+tc.cell.Number)) {
				t.Errorf("PAN %s…: not from cell %d's range of 453201", pan[:7], tc.cell.Number)
			}
			// The rows' own ids too (entries here): a move keeps them.
			var entry int64
			if err := db.NewRaw("select min(id) from entries").Scan(ctx, &entry); err != nil {
				t.Fatal(err)
			}
			if entry < tc.idRange[0] || entry >= tc.idRange[1] {
				t.Errorf("entry id %d: want one in %v", entry, tc.idRange)
			}
			gatewaytest.Verify(t, g.Ledger)
		})
	}
}

// Init is once per database: again with the same identity it changes
// nothing, with another it fails; Check refuses a database that is no
// cell, another cell, or one whose merchant ids left the range.
func TestInitAndCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	if _, err := cells.Check(ctx, db, "a1"); err == nil || !strings.Contains(err.Error(), "not a cell yet") {
		t.Errorf("Check before Init: %v", err)
	}
	for _, bad := range []cells.Identity{{Name: "A1", Number: 1}, {Name: "a1", Number: 0}, {Name: "a1", Number: 10}} {
		if err := cells.Init(ctx, db, bad); err == nil {
			t.Errorf("Init(%+v) succeeded", bad)
		}
	}
	a1 := cells.Identity{Name: "a1", Number: 1}
	for range 2 {
		if err := cells.Init(ctx, db, a1); err != nil {
			t.Fatal(err)
		}
	}
	if err := cells.Init(ctx, db, cells.Identity{Name: "b2", Number: 2}); err == nil || !strings.Contains(err.Error(), "already cell a1") {
		t.Errorf("Init as another cell: %v", err)
	}
	if _, err := cells.Check(ctx, db, "b2"); err == nil || !strings.Contains(err.Error(), "its database is cell a1") {
		t.Errorf("Check as another cell: %v", err)
	}
	// The sequence moved back out of the range (a restore, a mistake).
	if _, err := db.ExecContext(ctx, "select setval('merchants_id_seq', 5)"); err != nil {
		t.Fatal(err)
	}
	if _, err := cells.Check(ctx, db, "a1"); err == nil || !strings.Contains(err.Error(), "not in cell 1's range") {
		t.Errorf("Check with the sequence out of range: %v", err)
	}

	// A database with merchants from before cells is not made a cell:
	// their ids are in no cell's range.
	old := gatewaytest.New(t, nil, gatewaytest.Options{})
	gatewaytest.Merchant(t, old, "USD")
	if err := cells.Init(ctx, old.DB(), a1); err == nil || !strings.Contains(err.Error(), "outside cell 1's range") {
		t.Errorf("Init with a merchant already there: %v", err)
	}
}

// A merchant a cell has and the directory lacks (a creation stopped
// between its two writes) is placed by PlaceMissing, once; one the
// directory places in another cell is an error, not a second placement.
func TestPlaceMissing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := pgtest.NewDB(t)
	d := cells.NewDirectory(home)
	b2 := cells.Identity{Name: "b2", Number: 2}
	if _, err := d.Register(ctx, "a1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Register(ctx, b2.Name, b2.Number); err != nil {
		t.Fatal(err)
	}
	db := pgtest.NewDB(t)
	if err := cells.Init(ctx, db, b2); err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.New(t, db, gatewaytest.Options{CellName: b2.Name, CellNumber: b2.Number})
	m := gatewaytest.Merchant(t, g, "USD")
	for _, want := range []int{1, 0} { // placed, then nothing left to place
		n, err := d.PlaceMissing(ctx, b2.Name, db)
		if err != nil || n != want {
			t.Fatalf("PlaceMissing: %d %v, want %d", n, err, want)
		}
	}
	if e, ok, err := d.Lookup(ctx, m.ShopNo); err != nil || !ok || e.Cell != "b2" || e.MerchantID != m.ID {
		t.Errorf("placed as %+v %v %v", e, ok, err)
	}
	if _, err := home.ExecContext(ctx, "update cell_directory set cell = 'a1' where shop_no = ?", m.ShopNo); err != nil {
		t.Fatal(err)
	}
	if _, err := d.PlaceMissing(ctx, b2.Name, db); err == nil || !strings.Contains(err.Error(), "is placed in cell a1") {
		t.Errorf("a merchant placed in another cell: %v", err)
	}
}
