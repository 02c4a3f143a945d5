package ledger_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

func TestJournalRefusesUpdateAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 10_00)
	deposit(t, l, m.ID, "USD", 20_00)
	db := l.DB()
	for _, stmt := range []string{
		"update entries set kind = 'FEE' where merchant_id = ?",
		"delete from entries where merchant_id = ?",
		"update postings set amount = amount + 1 where merchant_id = ?",
		"delete from postings where merchant_id = ?",
		"update bill_lines set amount = 1 where merchant_id = ?",
		"delete from bill_lines where merchant_id = ?",
	} {
		_, err := db.ExecContext(ctx, stmt, m.ID)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%q: err = %v, want the append-only refusal", stmt, err)
		}
	}
	for _, table := range []string{"entries", "postings", "bill_lines"} {
		if _, err := db.ExecContext(ctx, "truncate "+table+" cascade"); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("truncate %s: err = %v, want the append-only refusal", table, err)
		}
	}
	mustVerify(t, l)
}

// With the trigger disabled (as a superuser could), a changed amount is
// found by Verify and named: the entry's hash and the balance fold break.
func TestVerifyNamesTamperedEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	for i := 0; i < 5; i++ {
		deposit(t, l, m.ID, "USD", int64(10_00+i))
	}
	mustVerify(t, l)
	db := l.DB()
	if _, err := db.ExecContext(ctx, `
		alter table postings disable trigger postings_append_only;
		update postings set amount = amount + 100 where merchant_id = ? and merchant_seq = 3;
		alter table postings enable trigger postings_append_only;`, m.ID); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.New(l).Verify(ctx, audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var chain, balance bool
	for _, p := range rep.Problems {
		if p.Check == audit.CheckHashChain && p.Merchant == m.ID && p.Seq == 3 {
			chain = true
		}
		if p.Check == audit.CheckBalance && p.Merchant == m.ID {
			balance = true
		}
		if p.Seq != 0 && p.Seq != 3 {
			t.Errorf("problem names an untouched entry: %s", p)
		}
	}
	if !chain || !balance {
		t.Fatalf("Verify did not name entry 3 and the balance: %+v", rep.Problems)
	}

	// A deleted entry is a gap in the sequence.
	if _, err := db.ExecContext(ctx, `
		alter table bill_lines disable trigger bill_lines_append_only;
		alter table postings disable trigger postings_append_only;
		alter table entries disable trigger entries_append_only;
		delete from bill_lines where merchant_id = ? and merchant_seq = 4;
		delete from postings where merchant_id = ? and merchant_seq = 4;
		delete from entries where merchant_id = ? and merchant_seq = 4;`, m.ID, m.ID, m.ID); err != nil {
		t.Fatal(err)
	}
	rep, err = audit.New(l).Verify(ctx, audit.VerifyOptions{Merchant: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	var gap bool
	for _, p := range rep.Problems {
		if p.Check == audit.CheckSequence && p.Seq == 5 {
			gap = true
		}
	}
	if !gap {
		t.Fatalf("Verify did not report the gap before entry 5: %+v", rep.Problems)
	}
}

// The SQL function entry_canonical that auditors use produces exactly the
// bytes Go hashes: sha256(prev_hash || entry_canonical(...)) = hash.
func TestSQLHashRecipeMatchesGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD", "EUR")
	deposit(t, l, m.ID, "USD", 500_00)
	_, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{{
		Merchant: m.ID, Kind: postings.KindCardTransferIn,
		Refs:     postings.Refs{CardNo: "crd_x", TxID: "tr_1"},
		Metadata: map[string]string{"fx_rate": "0.92", "fx_pair": "USD/EUR", "a": "z"},
		Postings: []postings.Posting{
			{Source: fund(m.ID, "USD"), Destination: postings.MerchantAccount(m.ID, postings.AccountFXPosition, "USD"), Amount: 100_00, Currency: "USD"},
			{Source: postings.MerchantAccount(m.ID, postings.AccountFXPosition, "EUR"), Destination: cardAvail(m.ID, "EUR", "crd_x"), Amount: 92_00, Currency: "EUR"},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var mismatches, total int
	err = l.DB().NewRaw(`
		select count(*) filter (where hash <> sha256(prev_hash || entry_canonical(merchant_id, merchant_seq))), count(*)
		from entries`).Scan(ctx, &mismatches, &total)
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || mismatches != 0 {
		t.Fatalf("%d of %d entries hash differently in SQL", mismatches, total)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	key := &ledger.Idempotency{Key: "dep-1"}

	first, err := l.Deposit(ctx, m.ID, "USD", 10_00, key)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Deposit(ctx, m.ID, "USD", 10_00, key)
	if err != nil {
		t.Fatal(err)
	}
	if again.Seq != first.Seq || again.Hash != first.Hash {
		t.Fatalf("replay returned entry %d, the original is %d", again.Seq, first.Seq)
	}
	if _, err := l.Deposit(ctx, m.ID, "USD", 11_00, key); postings.ErrorCode(err) != postings.ECONFLICT {
		t.Fatalf("same key, other body: %v, want ECONFLICT", err)
	}
	// Keys are per merchant: another merchant may use the same one.
	other := newMerchant(t, l, "USD")
	if _, err := l.Deposit(ctx, other.ID, "USD", 10_00, key); err != nil {
		t.Fatalf("another merchant's key collided: %v", err)
	}
	if got, _ := l.Balance(ctx, fund(m.ID, "USD")); got != 10_00 {
		t.Fatalf("funding = %d, want one deposit of 1000", got)
	}

	// A business failure is remembered too: the retry gets the same answer
	// even after the balance would allow it (Stripe's rule).
	failKey := &ledger.Idempotency{Key: "fund-1"}
	over := ledger.Batch{Merchant: m.ID, Idempotency: failKey, Entries: []postings.Entry{
		move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), cardAvail(m.ID, "USD", "crd_1"), 50_00)}}
	if _, err := l.Append(ctx, over); postings.ErrorCode(err) != postings.EINSUFFICIENT {
		t.Fatalf("overdraw = %v", err)
	}
	deposit(t, l, m.ID, "USD", 100_00)
	if _, err := l.Append(ctx, over); postings.ErrorCode(err) != postings.EINSUFFICIENT {
		t.Fatalf("replayed failure = %v, want the stored EINSUFFICIENT", err)
	}
	mustVerify(t, l)
}

func TestIdempotencyUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	const callers = 50
	var wg sync.WaitGroup
	seqs := make([]int64, callers)
	errs := make([]error, callers)
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rec, err := l.Deposit(ctx, m.ID, "USD", 25_00, &ledger.Idempotency{Key: "same-key"})
			errs[i] = err
			if err == nil {
				seqs[i] = rec.Seq
			}
		}(i)
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if seqs[i] != seqs[0] {
			t.Fatalf("callers got entries %d and %d", seqs[0], seqs[i])
		}
	}
	recs, err := l.Entries(ctx, m.ID, 1, 1000, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d entries for 50 calls with one key, %v", len(recs), err)
	}
	if got, _ := l.Balance(ctx, fund(m.ID, "USD")); got != 25_00 {
		t.Fatalf("funding = %d, want 2500", got)
	}
	mustVerify(t, l)
}

// The database's own check of every posting (postings_check_accounts, the
// second check after Go's): a posting between two merchants, or between two
// currencies, is refused even when written straight in SQL.
func TestPostingsRefuseAccountsOfAnotherMerchantOrCurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	a := newMerchant(t, l, "USD", "EUR")
	b := newMerchant(t, l, "USD")
	deposit(t, l, a.ID, "USD", 10_00)
	deposit(t, l, a.ID, "EUR", 10_00)
	deposit(t, l, b.ID, "USD", 10_00)
	db := l.DB()
	funding := func(m int64, cur string) int64 {
		t.Helper()
		var id int64
		if err := db.QueryRowContext(ctx, "select id from accounts where merchant_id = ? and type = 'funding' and currency = ?", m, cur).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	aUSD, aEUR, bUSD := funding(a.ID, "USD"), funding(a.ID, "EUR"), funding(b.ID, "USD")
	// A posting needs two accounts: the merchant's other USD account (the
	// deposits' counterpart) is a valid destination.
	var aOther int64
	if err := db.QueryRowContext(ctx, "select id from accounts where merchant_id = ? and currency = 'USD' and id <> ? limit 1", a.ID, aUSD).Scan(&aOther); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		src, dst int64
		refused  bool
	}{
		{"to another merchant", aUSD, bUSD, true},
		{"from another merchant", bUSD, aOther, true},
		// Each end in another currency than the posting's, on its own.
		{"destination in another currency", aUSD, aEUR, true},
		{"source in another currency", aEUR, aOther, true},
		{"within the merchant and currency", aUSD, aOther, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck
			if _, err := tx.ExecContext(ctx, `insert into entries (merchant_id, merchant_seq, kind, created_at, prev_hash, hash)
				values (?, 1000, 'ADJUSTMENT', now(), sha256(''), sha256(''))`, a.ID); err != nil {
				t.Fatal(err)
			}
			_, err = tx.ExecContext(ctx, `insert into postings (merchant_id, merchant_seq, idx, source_id, destination_id, amount, currency)
				values (?, 1000, 0, ?, ?, 1, 'USD')`, a.ID, c.src, c.dst)
			if c.refused && (err == nil || !strings.Contains(err.Error(), "crosses merchants or currencies")) {
				t.Errorf("err = %v, want the postings_accounts_check refusal", err)
			}
			if !c.refused && err != nil {
				t.Errorf("err = %v, want the posting accepted", err)
			}
		})
	}
}
