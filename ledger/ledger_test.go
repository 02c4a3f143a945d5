package ledger_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newLedger returns a ledger on a fresh database.
func newLedger(t testing.TB, cfg ledger.Config) *ledger.Ledger {
	t.Helper()
	return newLedgerOn(t, pgtest.NewDB(t), cfg)
}

// newLedgerOn returns a ledger on db.
func newLedgerOn(t testing.TB, db *bun.DB, cfg ledger.Config) *ledger.Ledger {
	t.Helper()
	l := ledger.New(db, cfg)
	t.Cleanup(l.Close)
	return l
}

// newMerchant creates a merchant through internal/merchant, whose keys are
// sealed with a key of its own (the journal reads no key).
func newMerchant(t testing.TB, l *ledger.Ledger, currencies ...string) *merchant.Merchant {
	t.Helper()
	return gatewaytest.Merchant(t, merchant.New(l, gatewaytest.NewSealer(t)), currencies...)
}

func deposit(t testing.TB, l *ledger.Ledger, m int64, cur string, minor int64) {
	t.Helper()
	if _, err := l.Deposit(context.Background(), m, cur, minor, nil); err != nil {
		t.Fatalf("Deposit: %v", err)
	}
}

// mustVerify fails the test when Verify finds anything.
func mustVerify(t testing.TB, l *ledger.Ledger) *audit.Report {
	t.Helper()
	rep, err := audit.New(l).Verify(context.Background(), audit.VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	for _, p := range rep.Problems {
		t.Errorf("Verify: %s", p)
	}
	return rep
}

func fund(m int64, cur string) postings.Account {
	return postings.MerchantAccount(m, postings.AccountFunding, cur)
}

func cardAvail(m int64, cur, card string) postings.Account {
	return postings.CardAccount(m, postings.AccountCardAvailable, cur, card)
}

func cardHeld(m int64, cur, card string) postings.Account {
	return postings.CardAccount(m, postings.AccountCardHeld, cur, card)
}

func move(m int64, kind postings.Kind, from, to postings.Account, amount int64) postings.Entry {
	return postings.Entry{Merchant: m, Kind: kind, Postings: []postings.Posting{
		{Source: from, Destination: to, Amount: amount, Currency: from.Currency},
	}}
}

func TestAppendMovesBalancesAndChains(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD", "EUR")
	deposit(t, l, m.ID, "USD", 100_00)

	res, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{
		move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), cardAvail(m.ID, "USD", "crd_a"), 30_00),
		move(m.ID, postings.KindCardAuth, cardAvail(m.ID, "USD", "crd_a"), cardHeld(m.ID, "USD", "crd_a"), 10_00),
	}})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if len(res.Records) != 2 || res.Records[0].Seq != 2 || res.Records[1].Seq != 3 {
		t.Fatalf("records %+v: want sequences 2 and 3", res.Records)
	}
	if res.Records[1].PrevHash != res.Records[0].Hash {
		t.Fatal("the second entry does not chain to the first")
	}
	for acct, want := range map[postings.Account]int64{
		fund(m.ID, "USD"):                                            70_00,
		cardAvail(m.ID, "USD", "crd_a"):                              20_00,
		cardHeld(m.ID, "USD", "crd_a"):                               10_00,
		postings.MerchantAccount(m.ID, postings.AccountWorld, "USD"): -100_00,
	} {
		got, err := l.Balance(ctx, acct)
		if err != nil || got != want {
			t.Errorf("Balance(%s) = %d, %v; want %d", acct.Address(), got, err, want)
		}
	}
	recs, err := l.Entries(ctx, m.ID, 1, 10, 0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("Entries = %d records, %v", len(recs), err)
	}
	if recs[2].Hash != res.Records[1].Hash || len(recs[2].Postings) != 1 || recs[2].Postings[0].Destination != cardHeld(m.ID, "USD", "crd_a") {
		t.Fatalf("read back %+v, differs from what was written", recs[2])
	}
	byCard, err := audit.New(l).EntriesByRef(ctx, m.ID, postings.Refs{CardNo: "crd_none"})
	if err != nil || len(byCard) != 0 {
		t.Fatalf("EntriesByRef(unknown) = %v, %v", byCard, err)
	}
	mustVerify(t, l)
}

func TestAppendIsAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 50_00)

	// The second entry overdraws the funding account: neither is written.
	_, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{
		move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), cardAvail(m.ID, "USD", "crd_a"), 30_00),
		move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), cardAvail(m.ID, "USD", "crd_b"), 30_00),
	}})
	if postings.ErrorCode(err) != postings.EINSUFFICIENT {
		t.Fatalf("Append = %v, want EINSUFFICIENT", err)
	}
	if got, _ := l.Balance(ctx, fund(m.ID, "USD")); got != 50_00 {
		t.Fatalf("funding = %d after a refused batch, want 5000", got)
	}
	if got, _ := l.Balance(ctx, cardAvail(m.ID, "USD", "crd_a")); got != 0 {
		t.Fatalf("card a = %d after a refused batch, want 0", got)
	}
	recs, _ := l.Entries(ctx, m.ID, 1, 100, 0)
	if len(recs) != 1 {
		t.Fatalf("%d entries, want only the deposit", len(recs))
	}
	// The next entry takes the next sequence number: nothing was consumed.
	deposit(t, l, m.ID, "USD", 1)
	recs, _ = l.Entries(ctx, m.ID, 1, 100, 0)
	if len(recs) != 2 || recs[1].Seq != 2 {
		t.Fatalf("entries after refusal: %d, last seq %d", len(recs), recs[len(recs)-1].Seq)
	}
	mustVerify(t, l)
}

func TestAppendRefusesInvalidInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	other := newMerchant(t, l, "USD")
	tests := []struct {
		name  string
		batch ledger.Batch
		want  postings.Code
	}{
		{"empty", ledger.Batch{Merchant: m.ID}, postings.EINVALID},
		{"unknown merchant", ledger.Batch{Merchant: 999_999, Entries: []postings.Entry{
			move(999_999, postings.KindDeposit, postings.MerchantAccount(999_999, postings.AccountWorld, "USD"), fund(999_999, "USD"), 1)}},
			postings.ENOTFOUND},
		{"another merchant's account", ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{
			move(m.ID, postings.KindCardFund, fund(other.ID, "USD"), cardAvail(m.ID, "USD", "c"), 1)}},
			postings.EINVALID},
		{"entry of another merchant", ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{
			move(other.ID, postings.KindDeposit, postings.MerchantAccount(other.ID, postings.AccountWorld, "USD"), fund(other.ID, "USD"), 1)}},
			postings.EINVALID},
	}
	for _, tt := range tests {
		if _, err := l.Append(ctx, tt.batch); postings.ErrorCode(err) != tt.want {
			t.Errorf("%s: Append = %v, want %s", tt.name, err, tt.want)
		}
	}
	if _, err := l.Deposit(ctx, m.ID, "EUR", 100, nil); postings.ErrorCode(err) != postings.EFORBIDDEN {
		t.Errorf("deposit in a currency the merchant lacks = %v, want EFORBIDDEN", err)
	}
	mustVerify(t, l)
}

// The writer reads every balance it writes back and compares it with what
// the batch computed; a difference means something else changed the row,
// and the whole batch is abandoned. A trigger that shifts the balance as
// the writer writes it stands in for that something, on both paths of the
// balance upsert: an existing account's row updated, a new one inserted.
func TestBalanceReadBackAbandonsTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 100_00)
	db := l.DB()
	if _, err := db.ExecContext(ctx, `create function test_shift_balance() returns trigger language plpgsql as $$
		begin new.balance := new.balance + 1; return new; end $$`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, when string
		entry      postings.Entry
	}{
		{"existing account updated", "before update", move(m.ID, postings.KindDeposit,
			postings.MerchantAccount(m.ID, postings.AccountWorld, "USD"), fund(m.ID, "USD"), 5_00)},
		{"new account inserted", "before insert", move(m.ID, postings.KindCardFund,
			fund(m.ID, "USD"), cardAvail(m.ID, "USD", "crd_readback"), 5_00)},
	} {
		if _, err := db.ExecContext(ctx, `create trigger test_shift `+c.when+` on balances
			for each row execute function test_shift_balance()`); err != nil {
			t.Fatal(err)
		}
		_, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{c.entry}})
		if err == nil || !strings.Contains(err.Error(), "after the batch, the batch computed") {
			t.Errorf("%s: err = %v, want the balance read-back to refuse the batch", c.name, err)
		}
		if _, err := db.ExecContext(ctx, `drop trigger test_shift on balances`); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing of either batch is left: the deposit alone, and the funding
	// balance it made.
	recs, err := l.Entries(ctx, m.ID, 1, 10, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Entries = %d records, %v; want the deposit alone", len(recs), err)
	}
	if got, err := l.Balance(ctx, fund(m.ID, "USD")); err != nil || got != 100_00 {
		t.Fatalf("funding balance %d, %v; want 100_00", got, err)
	}
	mustVerify(t, l)
}
