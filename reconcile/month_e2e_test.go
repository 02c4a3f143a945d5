package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/postings"
)

// TestMonthReconcilesEndToEnd is issue 29's done-when test: a month of
// activity generated from a fixed seed for four merchants in USD, EUR, GBP,
// JPY and KWD, driven through the domains on a real PostgreSQL, then closed
// as a finance team would close it (month_books_test.go: bill JSON = bill
// CSV = statement = balance report = balances, FEE lines = fee revenue,
// audit verify clean) and reconciled against the outside world
// (month_files_test.go: a settlement file, bank statements and a rail
// report written from the test's own record of what it sent each match
// with exit status 0, and each kind of tampering is caught).
//
// The month is modelled with the ledger's injected clock (ledger.Config.Now,
// the fixture's): every entry is still stamped "now" — the journal never
// back-dates — but "now" moves a day at a time from 2030-03-01, so that the
// bill's days, the statement's periods and the files' value dates are the
// real days of the month, not day-sized slices of one afternoon. A future
// month keeps idempotency keys (which expire by the database's clock) alive.
func TestMonthReconcilesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("a month of activity: skipped under -short")
	}
	m := newMonth(t, 20300301)
	m.run(t, monthDays)
	m.checkBooks(t)
	m.checkFiles(t)
}

const monthDays = 30

// monthMerchants are the shops and their currencies; cards exist in USD,
// EUR and GBP (the seeded BINs), so JPY and KWD are funding, remittance and
// cross-border currencies.
var monthMerchants = [][]string{
	{"USD", "EUR", "JPY", "KWD"},
	{"EUR", "GBP", "USD"},
	{"GBP", "JPY", "KWD", "USD"},
	{"USD", "KWD"},
}

var monthBins = map[string]string{"USD": "453201", "EUR": "453202", "GBP": "453203"}

// usdValue is what one unit of each currency is worth in USD: the rates of
// every pair are derived from it, so that they are consistent.
var usdValue = map[string]*big.Rat{
	"USD": big.NewRat(1, 1), "EUR": big.NewRat(1087, 1000), "GBP": big.NewRat(127, 100),
	"JPY": big.NewRat(1, 150), "KWD": big.NewRat(325, 100),
}

// scale is one unit of the currency in minor units.
var scale = map[string]int64{"USD": 100, "EUR": 100, "GBP": 100, "JPY": 1, "KWD": 1000}

// The test's record of what it did: the outside world's side of each file.
type (
	shopRec struct {
		m          *merchant.Merchant
		creds      *merchant.Credentials
		currencies []string
		cards      []*cards.Card
		owing      *cards.Card // a card that owes since an over-capture (month_owing_test.go)
		deposits   []depositRec
	}
	depositRec struct {
		ref, cur string
		minor    int64
		day      string
		seq      int64
	}
	openAuth struct {
		id, card string
		minor    int64 // transaction amount
		cur      string
	}
	clearingRec struct {
		msg, auth, cur, day string
		minor               int64
	}
	railRec struct {
		tx, status, cur, day string
		minor, fee           int64
	}
	refundRec struct {
		msg, card, cur, day string
		minor               int64
	}
)

type month struct {
	*fixture
	rng       *mrand.Rand
	shops     []*shopRec
	open      []openAuth
	clearings []clearingRec
	rails     []railRec
	refunds   []refundRec
	maker     adjustment.Actor
	checker   adjustment.Actor
	reversed  depositRec // the deposit the maker–checker adjustment reverses
	// reversedMerchant is the merchant of the reversed deposit.
	reversedMerchant int64
	stats            map[string]int
	start, end       time.Time
}

func newMonth(t *testing.T, seed uint64) *month {
	t.Helper()
	f := newFixture(t)
	mo := &month{fixture: f, rng: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), stats: map[string]int{}}
	mo.start = time.Date(fixtureStart.Year(), fixtureStart.Month(), fixtureStart.Day(), 0, 0, 0, 0, time.UTC)
	mo.setRates(t)
	mo.maker, mo.checker = mo.houseUser(t, "month.maker"), mo.houseUser(t, "month.checker")
	for _, curs := range monthMerchants {
		m, creds, err := f.l.CreateMerchant(context.Background(), merchant.Spec{Name: "Month shop", Currencies: curs})
		if err != nil {
			t.Fatalf("CreateMerchant: %v", err)
		}
		mo.shops = append(mo.shops, &shopRec{m: m, creds: creds, currencies: curs})
	}
	return mo
}

// setRates sets every pair of the month's currencies, mid = value(base) /
// value(quote) to six decimals, and keeps them younger than their maximum
// age (called every day).
func (mo *month) setRates(t *testing.T) {
	t.Helper()
	for b, bv := range usdValue {
		for q, qv := range usdValue {
			if b == q {
				continue
			}
			mid := new(big.Rat).Quo(bv, qv).FloatString(6)
			if _, err := mo.l.FX.Set(context.Background(), b, q, mid, 50); err != nil {
				t.Fatalf("FX %s/%s %s: %v", b, q, mid, err)
			}
		}
	}
}

// houseUser makes a house operator in the console's users (the
// adjustment's maker or checker).
func (mo *month) houseUser(t *testing.T, login string) adjustment.Actor {
	t.Helper()
	var id int64
	if err := mo.db.NewRaw(`insert into console_users (login, role, password_hash, totp_sealed) values (?, 'operator', '$argon2id$test', '\\x00')
		returning id`, login).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return adjustment.Actor{UserID: id, Login: login}
}

func (mo *month) day() string { return mo.now.Load().UTC().Format(time.DateOnly) }

// amount draws an amount of lo to hi units of cur, in minor units.
func (mo *month) amount(cur string, lo, hi int64) int64 {
	s := scale[cur]
	return lo*s + mo.rng.Int64N((hi-lo)*s+1)
}

// run drives the days: each starts at 08:00 and its steps are minutes
// apart, so that everything of a day is booked on that day.
func (mo *month) run(t *testing.T, days int) {
	t.Helper()
	for d := 0; d < days; d++ {
		if d > 0 {
			mo.advance(t, 24*time.Hour-time.Duration(mo.stats["steps today"])*time.Minute)
			mo.setRates(t)
		}
		mo.stats["steps today"] = 0
		for i, sh := range mo.shops {
			mo.shopDay(t, d, i, sh)
		}
		mo.networkDay(t)
	}
	mo.end = mo.start.AddDate(0, 0, days)
	mo.advance(t, 24*time.Hour) // past the month: its last day is closed
	t.Logf("month: %v", mo.stats)
}

// tick moves the clock a minute within the day.
func (mo *month) tick(t *testing.T) {
	mo.stats["steps today"]++
	mo.advance(t, time.Minute)
}

func (mo *month) shopDay(t *testing.T, d, i int, sh *shopRec) {
	t.Helper()
	ctx := context.Background()
	if d == 0 {
		for _, cur := range sh.currencies {
			mo.deposit(t, sh, cur, mo.amount(cur, 5000, 9000))
		}
		for _, cur := range sh.currencies {
			if monthBins[cur] == "" {
				continue
			}
			for k := 0; k < 2; k++ {
				c, err := mo.l.Cards.CreateCard(ctx, sh.m.ID, cards.CreateCardInput{Bin: monthBins[cur], Currency: cur, Amount: mo.amount(cur, 200, 400)}, nil)
				if err != nil {
					t.Fatalf("CreateCard: %v", err)
				}
				sh.cards = append(sh.cards, c)
			}
		}
		return
	}
	if mo.rng.IntN(4) == 0 {
		cur := sh.currencies[mo.rng.IntN(len(sh.currencies))]
		mo.deposit(t, sh, cur, mo.amount(cur, 300, 900))
	}
	// The maker–checker correction: a deposit booked by mistake on day 10
	// (merchant 0), reversed by an approved adjustment the same day.
	if d == 10 && i == 0 {
		mo.wrongDeposit(t, sh)
	}
	if sh.owing != nil {
		mo.repay(t, sh)
	}
	if d%7 == 3 {
		mo.overCapture(t, sh)
	}
	c := sh.cards[mo.rng.IntN(len(sh.cards))]
	tr := cards.TransferInput{CardNo: c.CardNo, Currency: c.Currency, Amount: mo.amount(c.Currency, 20, 120), Direction: cards.DirectionIn}
	if mo.rng.IntN(5) == 0 {
		tr.Direction, tr.Amount = cards.DirectionOut, mo.amount(c.Currency, 1, 5)
	}
	if _, err := mo.l.Cards.Transfer(ctx, sh.m.ID, tr, nil); err != nil {
		mo.stats["transfer refused "+string(postings.ErrorCode(err))]++
	} else {
		mo.stats["transfer "+tr.Direction]++
	}
	mo.tick(t)
	for n := 1 + mo.rng.IntN(3); n > 0; n-- {
		mo.authorize(t, sh.cards[mo.rng.IntN(len(sh.cards))])
	}
	if mo.rng.IntN(3) == 0 {
		mo.remit(t, sh)
	}
}

func (mo *month) deposit(t *testing.T, sh *shopRec, cur string, minor int64) depositRec {
	t.Helper()
	ref := fmt.Sprintf("BNK-%s-%03d-%s", sh.m.ShopNo, mo.stats["deposit"]+1, cur)
	res, err := deposit.New(mo.l.Ledger).Deposit(context.Background(), sh.m.ID, cur, minor, ref, nil)
	if err != nil {
		t.Fatalf("Deposit %s: %v", ref, err)
	}
	r := depositRec{ref: ref, cur: cur, minor: minor, day: mo.day(), seq: res.Seq}
	sh.deposits = append(sh.deposits, r)
	mo.stats["deposit"]++
	mo.tick(t)
	return r
}

// wrongDeposit books a deposit the bank never made and corrects it with
// a reversal proposed by one house user and approved by another. The
// deposit stays in the journal and the bill (nothing is edited); the bank
// statement has no line for it.
func (mo *month) wrongDeposit(t *testing.T, sh *shopRec) {
	t.Helper()
	ctx := context.Background()
	r := mo.deposit(t, sh, "USD", 1234_56)
	sh.deposits = sh.deposits[:len(sh.deposits)-1]
	adj := adjustment.New(mo.l.Ledger)
	p, err := adj.Propose(ctx, mo.maker, adjustment.ProposeInput{Merchant: sh.m.ID, Reverses: r.seq,
		Reason: "deposit booked twice by the bank feed", Reference: "CASE-" + r.ref})
	if err != nil {
		t.Fatalf("Propose: %v", err)
	}
	if _, err := adj.Approve(ctx, mo.maker, sh.m.ID, p.ID); err == nil {
		t.Fatal("the maker approved its own adjustment")
	}
	if _, err := adj.Approve(ctx, mo.checker, sh.m.ID, p.ID); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	mo.reversed, mo.reversedMerchant = r, sh.m.ID
	mo.stats["adjustment"]++
	mo.tick(t)
}

// authorize asks for a hold; a quarter are cross-border (another
// currency than the card's: converted, with a fee held beside it).
func (mo *month) authorize(t *testing.T, c *cards.Card) {
	t.Helper()
	cur := c.Currency
	if mo.rng.IntN(4) == 0 {
		others := []string{"USD", "EUR", "GBP", "JPY", "KWD"}
		for cur == c.Currency {
			cur = others[mo.rng.IntN(len(others))]
		}
	}
	minor := mo.amount(cur, 1, 40)
	res, err := mo.l.Network.Authorize(context.Background(), network.AuthRequest{MessageID: mo.msg(), CardNo: c.CardNo, Amount: minor,
		Currency: cur, MerchantName: "Shop", MCC: "5411", MerchantCountry: "DE"})
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	mo.tick(t)
	if !res.Approved {
		mo.stats["declined "+res.Code]++
		return
	}
	mo.stats["authorized"]++
	if cur != c.Currency {
		mo.stats["authorized cross-border"]++
	}
	mo.open = append(mo.open, openAuth{id: res.AuthID, card: c.CardNo, minor: minor, cur: cur})
}

// networkDay settles yesterday's holds and some of today's: exact,
// partial, over-captured (up to 15 % above: within the tolerance),
// reversed in part then cleared, or wholly reversed; a few stay open.
// Some clearings are refunded in part.
func (mo *month) networkDay(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var keep []openAuth
	for _, a := range mo.open {
		switch r := mo.rng.IntN(12); {
		case r < 2: // stays open another day
			keep = append(keep, a)
		case r < 3:
			if _, err := mo.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: mo.msg(), AuthID: a.id}); err != nil {
				t.Fatalf("Reverse: %v", err)
			}
			mo.stats["reversed"]++
		default:
			amt := a.minor
			switch {
			case r < 5:
				amt = a.minor * (100 + mo.rng.Int64N(16)) / 100
				mo.stats["over-capture"]++
			case r < 7:
				amt = max(1, a.minor*int64(50+mo.rng.IntN(50))/100)
				mo.stats["partial"]++
			case r < 8 && a.minor > 1:
				part := a.minor / 3
				if _, err := mo.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: mo.msg(), AuthID: a.id, Amount: part}); err != nil {
					t.Fatalf("Reverse part: %v", err)
				}
				amt = a.minor - part
				mo.stats["reversed in part"]++
			}
			msg := mo.msg()
			if _, err := mo.l.Network.Clear(ctx, network.ClearRequest{MessageID: msg, AuthID: a.id, Amount: amt}); err != nil {
				t.Fatalf("Clear %d of %+v: %v", amt, a, err)
			}
			mo.clearings = append(mo.clearings, clearingRec{msg: msg, auth: a.id, cur: a.cur, day: mo.day(), minor: amt})
			mo.stats["cleared"]++
			if mo.rng.IntN(8) == 0 {
				mo.refund(t, a.card)
			}
		}
		mo.tick(t)
	}
	mo.open = keep
}

func (mo *month) refund(t *testing.T, cardNo string) {
	t.Helper()
	for _, sh := range mo.shops {
		for _, c := range sh.cards {
			if c.CardNo != cardNo {
				continue
			}
			msg, minor := mo.msg(), mo.amount(c.Currency, 1, 3)
			if _, err := mo.l.Network.Refund(context.Background(), network.RefundRequest{MessageID: msg, CardNo: cardNo,
				Amount: minor, Currency: c.Currency}); err != nil {
				// More than the network captured on the card: refused,
				// as it should be; nothing was booked.
				if postings.ErrorCode(err) != postings.ELIMIT {
					t.Fatalf("Refund: %v", err)
				}
				mo.stats["refund refused"]++
				return
			}
			mo.refunds = append(mo.refunds, refundRec{msg: msg, card: cardNo, cur: c.Currency, day: mo.day(), minor: minor})
			mo.stats["refund"]++
			return
		}
	}
}

var monthBeneficiary, _ = json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE", "bank_swift": "COBADEFFXXX",
	"account_no": "DE89370400440532013000"})

// remit sends a remittance with a fee and the rail settles it or (one in
// four) returns it, the same day.
func (mo *month) remit(t *testing.T, sh *shopRec) {
	t.Helper()
	ctx := context.Background()
	cur := sh.currencies[mo.rng.IntN(len(sh.currencies))]
	amt, fee := mo.amount(cur, 10, 200), mo.amount(cur, 0, 3)
	r, err := mo.l.Remit.CreateRemittance(ctx, sh.m.ID, remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: monthBeneficiary,
		Amount: amt, Fee: fee, Currency: cur, Purpose: "SUPP", Rail: "SWIFT"}, nil)
	if err != nil {
		t.Fatalf("CreateRemittance: %v", err)
	}
	end := remittance.RemitSettled
	if mo.rng.IntN(4) == 0 {
		end = remittance.RemitReturned
	}
	path := []string{remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitInFlight, end}
	for k := 1; k < len(path); k++ {
		if _, _, err := mo.l.Remit.TransitionRemittance(ctx, sh.m.ID, remittance.RemittanceTransition{TxID: r.TxID, From: path[k-1],
			To: path[k], Reason: "AC04", NextActionAt: mo.now.Load().Add(time.Hour)}, nil); err != nil {
			t.Fatalf("%s → %s: %v", path[k-1], path[k], err)
		}
	}
	mo.rails = append(mo.rails, railRec{tx: r.TxID, status: end, cur: cur, day: mo.day(), minor: amt, fee: fee})
	mo.stats["remit "+end]++
	mo.tick(t)
}
