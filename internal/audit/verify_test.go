package audit_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

// verifyFixture is a merchant with a funded card, an open hold on it and
// three deposits after them, and another merchant that no test touches.
// The card and the hold are made by the domains (internal/gatewaytest):
// Verify checks their tables against the journal too.
type verifyFixture struct {
	l        *gatewaytest.Gateway
	m        *merchant.Merchant
	card     *cards.Card
	other    *merchant.Merchant
	deposits [3]int64 // the sequences of the three last deposits of f.m
	fundUSD  int64    // f.m's USD funding account
}

func newVerifyFixture(t *testing.T) *verifyFixture {
	t.Helper()
	ctx := context.Background()
	f := &verifyFixture{l: gatewaytest.New(t, nil, gatewaytest.Options{})}
	f.m = newMerchant(t, f.l.Ledger, "USD", "EUR")
	deposit(t, f.l.Ledger, f.m.ID, "USD", 10_000_00)
	var err error
	f.card, err = f.l.Cards.CreateCard(ctx, f.m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "verify-hold", CardNo: f.card.CardNo,
		Amount: 30_00, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		deposit(t, f.l.Ledger, f.m.ID, "USD", int64(1_00*(i+1)))
	}
	f.other = newMerchant(t, f.l.Ledger, "USD")
	deposit(t, f.l.Ledger, f.other.ID, "USD", 5_00)
	deposit(t, f.l.Ledger, f.other.ID, "USD", 6_00)
	f.readDeposits(t)
	if err := f.l.DB().QueryRowContext(ctx, `select id from accounts where merchant_id = ? and type = 'funding' and currency = 'USD'`, f.m.ID).Scan(&f.fundUSD); err != nil {
		t.Fatal(err)
	}
	return f
}

// tamper runs SQL behind the append-only triggers' back, as a superuser
// could. $M is the merchant, $D1..$D3 the deposits' sequences, $OTHER the
// other merchant, $FUND the USD funding account, $CARD the card.
func (f *verifyFixture) tamper(t *testing.T, stmt string) {
	t.Helper()
	stmt = strings.NewReplacer("$M", fmt.Sprint(f.m.ID), "$D1", fmt.Sprint(f.deposits[0]), "$D2", fmt.Sprint(f.deposits[1]),
		"$D3", fmt.Sprint(f.deposits[2]), "$OTHER", fmt.Sprint(f.other.ID), "$FUND", fmt.Sprint(f.fundUSD),
		"$CARD", f.card.CardNo).Replace(stmt)
	tables := []string{"entries", "postings", "bill_lines", "accounts"}
	var b strings.Builder
	for _, tb := range tables {
		fmt.Fprintf(&b, "alter table %s disable trigger %s_append_only;\n", tb, tb)
	}
	b.WriteString(stmt + ";\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "alter table %s enable trigger %s_append_only;\n", tb, tb)
	}
	if _, err := f.l.DB().DB.ExecContext(context.Background(), b.String()); err != nil {
		t.Fatalf("tampering: %v\n%s", err, stmt)
	}
}

// verifyMode is a way Verify may run: each must report exactly the same.
type verifyMode struct {
	name  string
	hooks *audit.VerifyHooks
	conns func(t *testing.T, used map[int]bool) // checks which connections ran the checks
}

func intp(n int) *int { return &n }

var verifyModes = []verifyMode{
	{name: "default"},
	{name: "checks on a helper connection, beside the stream", hooks: &audit.VerifyHooks{Helpers: intp(1), HelpersOnly: true},
		conns: func(t *testing.T, used map[int]bool) {
			if len(used) != 1 || !used[1] {
				t.Errorf("the checks ran on connections %v, want only the helper 1", used)
			}
		}},
	{name: "two helpers", hooks: &audit.VerifyHooks{Helpers: intp(2), HelpersOnly: true},
		conns: func(t *testing.T, used map[int]bool) {
			if used[0] {
				t.Errorf("the checks ran on connections %v, want only helpers", used)
			}
		}},
	{name: "one connection", hooks: &audit.VerifyHooks{Helpers: intp(0)},
		conns: func(t *testing.T, used map[int]bool) {
			if len(used) != 1 || !used[0] {
				t.Errorf("the checks ran on connections %v, want only the stream's", used)
			}
		}},
	// Batches of two rows and a cache of three accounts: the entries, their
	// postings and their bill lines cross batch boundaries at different
	// places, and the account cache starts again every few postings.
	// The balance_after chains are left to the query from the second account.
	// and so is the comparison of the balances with the postings.
	{name: "small batches", hooks: &audit.VerifyHooks{FetchRows: 2, AccountsCachedMax: 3, ChainAccountsMax: 1, BalanceAccountsMax: 1}},
	{name: "no snapshot to export", hooks: &audit.VerifyHooks{Helpers: intp(1), ExportFails: true},
		conns: func(t *testing.T, used map[int]bool) {
			if len(used) != 1 || !used[0] {
				t.Errorf("the checks ran on connections %v, want only the stream's", used)
			}
		}},
}

// verifyAllModes runs Verify in every mode, checks that they agree and
// returns the report.
func verifyAllModes(t *testing.T, l *ledger.Ledger, opts audit.VerifyOptions) *audit.Report {
	t.Helper()
	var first *audit.Report
	for _, mode := range verifyModes {
		o := opts
		var mu sync.Mutex
		used := map[int]bool{}
		if mode.hooks != nil {
			h := *mode.hooks
			h.BeforeCheck = func(conn int, _ string) {
				mu.Lock()
				used[conn] = true
				mu.Unlock()
			}
			o = audit.WithVerifyHooks(o, h)
		}
		rep, err := audit.New(l).Verify(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: Verify: %v", mode.name, err)
		}
		if mode.conns != nil {
			mode.conns(t, used)
		}
		rep.Elapsed = ""
		if first == nil {
			first = rep
		} else if !reflect.DeepEqual(rep, first) {
			t.Errorf("%s reports\n%+v\nthe default mode\n%+v", mode.name, rep, first)
		}
	}
	return first
}

type wantProblem struct {
	check  string
	seq    int // 0: any; 1..3: the deposit
	detail string
}

// Every invariant is caught however the checks are spread over
// connections, and every mode reports the same problems in the same order.
func TestVerifyDetectsEachBreakInEveryMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper string
		want   []wantProblem
		other  bool // the tampering changes the other merchant's folds too
	}{
		{name: "untouched"},
		{name: "changed amount", tamper: `update postings set amount = amount + 1 where merchant_id = $M and merchant_seq = $D1`,
			want: []wantProblem{{audit.CheckHashChain, 1, "stored hash"}, {audit.CheckBalance, 0, "the postings sum to"},
				{audit.CheckBill, 0, "has no matching posting side"}}},
		{name: "deleted entry", tamper: `delete from bill_lines where merchant_id = $M and merchant_seq = $D2;
			delete from postings where merchant_id = $M and merchant_seq = $D2;
			delete from entries where merchant_id = $M and merchant_seq = $D2`,
			want: []wantProblem{{audit.CheckSequence, 3, "expected sequence"}, {audit.CheckHashChain, 3, "prev_hash"},
				{audit.CheckBill, 0, "bill sequence"}}},
		{name: "posting to another merchant", tamper: `update postings set destination_id = (select id from accounts where merchant_id = $OTHER and type = 'funding')
			where merchant_id = $M and merchant_seq = $D1`,
			want:  []wantProblem{{audit.CheckBalanced, 1, "another merchant's account"}, {audit.CheckHashChain, 1, "stored hash"}},
			other: true},
		{name: "posting across currencies", tamper: `insert into accounts (merchant_id, type, currency, address) values ($M, 'fee_revenue', 'EUR', 'm:$M:fee_revenue:EUR');
			insert into balances (account_id, merchant_id, currency, constrained) select id, $M, 'EUR', false from accounts where address = 'm:$M:fee_revenue:EUR';
			update postings set source_id = (select id from accounts where address = 'm:$M:fee_revenue:EUR') where merchant_id = $M and merchant_seq = $D2`,
			want: []wantProblem{{audit.CheckBalanced, 2, "does not sum to zero in EUR"}, {audit.CheckBalanced, 2, "does not sum to zero in USD"}}},
		{name: "head", tamper: `update ledger_heads set last_seq = last_seq + 1 where merchant_id = $M`,
			want: []wantProblem{{audit.CheckHead, 0, "head says"}}},
		{name: "head hash", tamper: `update ledger_heads set last_hash = sha256(last_hash) where merchant_id = $M`,
			want: []wantProblem{{audit.CheckHead, 0, "head hash differs"}}},
		{name: "balance", tamper: `update balances set balance = balance + 1 where account_id = $FUND`,
			want: []wantProblem{{audit.CheckBalance, 0, "the postings sum to"}, {audit.CheckCurrency, 0, "balances in USD sum to"},
				{audit.CheckBillChain, 0, "last bill line"}}},
		{name: "missing balance", tamper: `insert into accounts (merchant_id, type, currency, address) values ($M, 'fee_revenue', 'EUR', 'm:$M:fee_revenue:EUR')`,
			want: []wantProblem{{audit.CheckBalance, 0, "balance missing, the postings sum to 0"}}},
		{name: "negative", tamper: `update balances set constrained = false, balance = -5 where account_id = $FUND`,
			want: []wantProblem{{audit.CheckNegative, 0, "below zero"}, {audit.CheckBalance, 0, "balance -5"}}},
		{name: "receivable in credit", tamper: `insert into accounts (merchant_id, type, currency, card_no, address) values ($M, 'card_receivable', 'USD', '$CARD', 'm:$M:card_receivable:USD:$CARD');
			insert into balances (account_id, merchant_id, currency, constrained, balance) select id, $M, 'USD', false, 5 from accounts where address = 'm:$M:card_receivable:USD:$CARD'`,
			want: []wantProblem{{audit.CheckNegative, 0, "never a credit"}, {audit.CheckBalance, 0, "balance 5"}}},
		{name: "missing bill line", tamper: `delete from bill_lines where merchant_id = $M and merchant_seq = $D1`,
			want: []wantProblem{{audit.CheckBill, 0, "has no bill line"}, {audit.CheckBill, 0, "bill sequence"}}},
		{name: "bill head", tamper: `update ledger_heads set last_bill_seq = last_bill_seq + 1 where merchant_id = $M`,
			want: []wantProblem{{audit.CheckBill, 0, "bill sequence"}}},
		{name: "bill chain", tamper: `update bill_lines set balance_after = balance_after + 1 where merchant_id = $M and merchant_seq = $D2`,
			want: []wantProblem{{audit.CheckBillChain, 0, "<> balance after"}}},
		// Two lines of one account numbered against the journal's order,
		// their balance_after still following in the journal's: the chain
		// in bill_seq order breaks, which only the query sees.
		{name: "bill lines renumbered", tamper: `update bill_lines set bill_seq = bill_seq + 1000000 where merchant_id = $M and merchant_seq = $D2;
			update bill_lines set bill_seq = bill_seq - 1 where merchant_id = $M and merchant_seq = $D3;
			update bill_lines set bill_seq = bill_seq - 1000000 + 1 where merchant_id = $M and merchant_seq = $D2`,
			want: []wantProblem{{audit.CheckBillChain, 0, "<> balance after"}}},
		{name: "bill line of another kind", tamper: `update bill_lines set kind = 'FEE' where merchant_id = $M and merchant_seq = $D3`,
			want: []wantProblem{{audit.CheckBill, 0, "differ from it in kind or time"}}},
		{name: "empty entry", tamper: `delete from bill_lines where merchant_id = $M and merchant_seq = $D2;
			delete from postings where merchant_id = $M and merchant_seq = $D2`,
			want: []wantProblem{{audit.CheckEmptyEntry, 2, "without postings"}, {audit.CheckHashChain, 2, "stored hash"}}},
		// Rows that the foreign keys keep out, in case they are dropped: the
		// stream merges the three tables by key, and a key with no entry
		// still has its postings and lines checked.
		{name: "bill line without its entry", tamper: `alter table bill_lines drop constraint bill_lines_entry_fkey;
			insert into bill_lines (merchant_id, bill_seq, merchant_seq, posting_idx, account_id, kind, amount, currency, balance_after, created_at)
			select merchant_id, (select max(bill_seq) + 1 from bill_lines where merchant_id = $M), 1000, posting_idx, account_id, kind, amount, currency,
			       balance_after + amount, created_at
			from bill_lines where merchant_id = $M and merchant_seq = $D3`,
			want: []wantProblem{{audit.CheckBill, 0, "bill line"}, {audit.CheckBill, 0, "(entry 1000) has no matching posting side"},
				{audit.CheckBill, 0, "entry 1000 differ from it in kind or time, or it does not exist"}, {audit.CheckBill, 0, "bill sequence"},
				{audit.CheckBillChain, 0, "last bill line"}}},
		{name: "posting without its entry", tamper: `alter table postings drop constraint postings_entry_fkey;
			insert into postings (merchant_id, merchant_seq, idx, source_id, destination_id, amount, currency)
			select merchant_id, 1000, idx, source_id, destination_id, amount, currency from postings where merchant_id = $M and merchant_seq = $D3`,
			want: []wantProblem{{audit.CheckHashChain, 0, "1 postings without their entry"}, {audit.CheckBalance, 0, "the postings sum to"},
				{audit.CheckBill, 0, "entry 1000 posting 0 has no bill line"}}},
		{name: "holds", tamper: `update authorizations set held = held - 1 where merchant_id = $M and status = 'OPEN'`,
			want: []wantProblem{{audit.CheckHolds, 0, "open holds sum to"}}},
		{name: "open hold without a held account", tamper: `update accounts set type = 'card_receivable' where merchant_id = $M and type = 'card_held'`,
			want: []wantProblem{{audit.CheckHolds, 0, "open holds without a held balance"}, {audit.CheckHashChain, 0, "stored hash"}}},
		{name: "metadata", tamper: `update entries set metadata = '{"a": "b"}' where merchant_id = $M and merchant_seq = $D1;
			update entries set metadata = '{"a": 1}' where merchant_id = $M and merchant_seq = $D3`,
			want: []wantProblem{{audit.CheckHashChain, 1, "stored hash"}, {audit.CheckHashChain, 3, "not a JSON object of strings"}}},
		{name: "time of an entry", tamper: `update entries set created_at = created_at + interval '1 microsecond' where merchant_id = $M and merchant_seq = $D1`,
			want: []wantProblem{{audit.CheckHashChain, 1, "stored hash"}, {audit.CheckBill, 0, "differ from it in kind or time"}}},
		{name: "reference", tamper: `update entries set tx_id = 'tx_changed' where merchant_id = $M and merchant_seq = $D2`,
			want: []wantProblem{{audit.CheckHashChain, 2, "stored hash"}}},
		{name: "bill_blocks count", tamper: `update bill_blocks set n = n + 1 where merchant_id = $M and kind = 'DEPOSIT'`,
			want: []wantProblem{{audit.CheckBillBlocks, 0, "bill_blocks counts"}}},
		{name: "bill_blocks missing and extra", tamper: `delete from bill_blocks where merchant_id = $M;
			insert into bill_blocks (merchant_id, kind, currency, block, n) values ($M, 'FX', 'USD', 7, 1)`,
			want: []wantProblem{{audit.CheckBillBlocks, 0, "bill_blocks counts 0"}, {audit.CheckBillBlocks, 0, "0 bill lines, bill_blocks counts 1"}}},
		{name: "prev hash", tamper: `update entries set prev_hash = sha256(prev_hash) where merchant_id = $M and merchant_seq = $D3`,
			want: []wantProblem{{audit.CheckHashChain, 3, "prev_hash is not"}, {audit.CheckHashChain, 3, "stored hash"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newVerifyFixture(t)
			if tc.tamper != "" {
				f.tamper(t, tc.tamper)
			}
			rep := verifyAllModes(t, f.l.Ledger, audit.VerifyOptions{})
			if rep.Merchants != 2 || rep.Entries < 7 {
				t.Errorf("counts: %+v", rep)
			}
			if tc.want == nil && !rep.OK() {
				t.Fatalf("problems in an untouched journal: %v", rep.Problems)
			}
			for _, w := range tc.want {
				found := false
				for _, p := range rep.Problems {
					seqOK := w.seq == 0 || p.Seq == f.deposits[w.seq-1]
					found = found || (p.Check == w.check && p.Merchant == f.m.ID && seqOK && strings.Contains(p.Detail, w.detail))
				}
				if !found {
					t.Errorf("no %s problem (deposit %d) saying %q in %v", w.check, w.seq, w.detail, rep.Problems)
				}
			}
			if tc.other {
				return
			}
			for _, p := range rep.Problems {
				if p.Merchant == f.other.ID {
					t.Errorf("a problem of the untouched merchant: %s", p)
				}
			}
			// The same, for the merchant alone.
			one := verifyAllModes(t, f.l.Ledger, audit.VerifyOptions{Merchant: f.m.ID})
			if one.Merchants != 1 || !reflect.DeepEqual(one.Problems, rep.Problems) {
				t.Errorf("merchant alone: %d merchants, %d problems; all merchants: %d problems", one.Merchants, len(one.Problems), len(rep.Problems))
			}
		})
	}
}

// The helpers import the snapshot the stream's connection exported: what
// commits after it (an entry, a balance changed behind the ledger's back)
// is seen by no check, and the report counts the journal as it was.
func TestVerifyChecksSeeTheStreamsSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newVerifyFixture(t)
	before := mustVerify(t, f.l.Ledger)
	var once sync.Once
	var conns sync.Map
	opts := audit.WithVerifyHooks(audit.VerifyOptions{}, audit.VerifyHooks{
		Helpers: intp(1), HelpersOnly: true,
		AfterSnapshot: func() {
			once.Do(func() {
				deposit(t, f.l.Ledger, f.m.ID, "USD", 7_00)
				if _, err := f.l.DB().ExecContext(ctx, `update balances set balance = balance + 1 where account_id = ?`, f.fundUSD); err != nil {
					t.Error(err)
				}
			})
		},
		BeforeCheck: func(conn int, name string) { conns.Store(name, conn) },
	})
	rep, err := audit.New(f.l.Ledger).Verify(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Entries != before.Entries || rep.Postings != before.Postings {
		t.Fatalf("Verify saw what committed after its snapshot: %d entries (before %d), problems %v", rep.Entries, before.Entries, rep.Problems)
	}
	for _, name := range audit.VerifyCheckNames() {
		if conn, ok := conns.Load(name); !ok || conn != 1 {
			t.Errorf("check %s ran on connection %v, want the helper", name, conn)
		}
	}
	// A new snapshot sees both.
	rep, err = audit.New(f.l.Ledger).Verify(ctx, audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != before.Entries+1 {
		t.Errorf("entries %d, want %d", rep.Entries, before.Entries+1)
	}
	var balance bool
	for _, p := range rep.Problems {
		balance = balance || p.Check == audit.CheckBalance
	}
	if !balance {
		t.Errorf("the changed balance is not reported: %v", rep.Problems)
	}
}

// A pool of one connection cannot lend Verify a second: it checks
// everything on the one, and finds what the others find.
func TestVerifyOnAPoolOfOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db, err := database.OpenDB(ctx, url, database.DBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := ledger.New(db, ledger.Config{Domains: domains.All()})
	t.Cleanup(l.Close)
	m := newMerchant(t, l, "USD")
	for i := range 5 {
		deposit(t, l, m.ID, "USD", int64(10_00+i))
	}
	// The auditor's ledger: one connection.
	one, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { one.Close() })
	auditor := ledger.New(one, ledger.Config{})
	t.Cleanup(auditor.Close)
	var conns sync.Map
	opts := audit.WithVerifyHooks(audit.VerifyOptions{}, audit.VerifyHooks{
		BeforeCheck: func(conn int, name string) { conns.Store(conn, true) },
	})
	rep, err := audit.New(auditor).Verify(ctx, opts)
	if err != nil || !rep.OK() || rep.Entries != 5 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	if _, ok := conns.Load(1); ok {
		t.Error("a helper connection ran a check on a pool of one")
	}
	if _, err := db.ExecContext(ctx, `update balances set balance = balance + 1 where merchant_id = ? and currency = 'USD' and constrained`, m.ID); err != nil {
		t.Fatal(err)
	}
	rep, err = audit.New(auditor).Verify(ctx, audit.VerifyOptions{})
	if err != nil || rep.OK() {
		t.Fatalf("Verify after a changed balance = %+v, %v", rep, err)
	}
}

// A cancelled Verify returns the cancellation, wherever it happens, and
// leaves no transaction open on any connection of the pool.
func TestVerifyCancelled(t *testing.T) {
	t.Parallel()
	f := newVerifyFixture(t)
	for _, at := range []string{"snapshot", "stream's check", "helper's check"} {
		t.Run(at, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := audit.VerifyHooks{Helpers: intp(1), HelpersOnly: at == "helper's check"}
			switch at {
			case "snapshot":
				h.AfterSnapshot = cancel
			case "stream's check":
				h.Helpers = intp(0)
				h.BeforeCheck = func(int, string) { cancel() }
			default:
				h.BeforeCheck = func(conn int, _ string) {
					if conn == 1 {
						cancel()
					}
				}
			}
			rep, err := audit.New(f.l.Ledger).Verify(ctx, audit.WithVerifyHooks(audit.VerifyOptions{}, h))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Verify = %+v, %v, want the cancellation", rep, err)
			}
			if n := f.l.DB().Stats().InUse; n != 0 {
				t.Errorf("%d connections still in use", n)
			}
			// A connection whose query was cancelled is closed (pgx's
			// default), and its backend exits a moment later; one that
			// stays in the pool must not be left in a transaction.
			deadline := time.Now().Add(10 * time.Second)
			for {
				var open int
				if err := f.l.DB().QueryRowContext(context.Background(),
					`select count(*) from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`).Scan(&open); err != nil {
					t.Fatal(err)
				}
				if open == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d transactions left open", open)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	mustVerify(t, f.l.Ledger)
}

// The progress bar's total comes from the heads, without counting the
// journal, and the calls come from one goroutine, in order, ending at the
// total.
func TestVerifyProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := gatewaytest.New(t, nil, gatewaytest.Options{}).Ledger
	m := newMerchant(t, l, "USD")
	const n = 25_000 // more than one progress step
	for i := 0; i < n; i += ledger.BatchEntriesMax {
		var entries []postings.Entry
		for j := i; j < min(n, i+ledger.BatchEntriesMax); j++ {
			entries = append(entries, move(m.ID, postings.KindDeposit, postings.MerchantAccount(m.ID, postings.AccountWorld, "USD"), fund(m.ID, "USD"), 1))
		}
		if _, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: entries}); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int64
	var last, total int64
	rep, err := audit.New(l).Verify(ctx, audit.VerifyOptions{Progress: func(done, tot int64) {
		calls.Add(1)
		if done < last || (total != 0 && tot != total) {
			t.Errorf("progress %d/%d after %d/%d", done, tot, last, total)
		}
		last, total = done, tot
	}})
	if err != nil || !rep.OK() {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	if calls.Load() < 3 || last != n || total != n {
		t.Errorf("%d progress calls, the last %d/%d, want ≥ 3 ending at %d/%d", calls.Load(), last, total, n, n)
	}
}

// The stream's cursors are read in batches copied out of the connection:
// every row arrives once, in order, across batch boundaries; an empty text
// stays apart from NULL (the hash check tells them apart); and rows out of
// key order, which would make the merge of the three tables wrong, are an
// error rather than a report.
func TestVerifyCursorBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	const ordered = `select (s / 3)::int8, s::int8,
		case s % 3 when 1 then '' when 2 then null else 'x' || s end
		from generate_series(1, 10) s order by 1, 2`
	for _, batch := range []int{1, 2, 3, 10, 11, 100} {
		rows, err := audit.ReadCursor(ctx, db, ordered, batch)
		if err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		if len(rows) != 10 {
			t.Fatalf("batch %d: %d rows, want 10", batch, len(rows))
		}
		for i, r := range rows {
			s := int64(i + 1)
			var want *string
			switch s % 3 {
			case 1:
				want = new(string)
			case 0:
				x := fmt.Sprintf("x%d", s)
				want = &x
			}
			if r.Merchant != s/3 || r.Seq != s || (r.Text == nil) != (want == nil) || (want != nil && *r.Text != *want) {
				t.Errorf("batch %d: row %d = %+v (text %v), want %d/%d %v", batch, i, r, r.Text, s/3, s, want)
			}
		}
	}
	_, err := audit.ReadCursor(ctx, db, `select 1::int8, s::int8, '' from generate_series(5, 1, -1) s`, 2)
	if err == nil || !strings.Contains(err.Error(), "out of key order") {
		t.Errorf("rows out of order: %v, want an error", err)
	}
}

// The stream follows the balance_after chains itself while the bill lines
// are as the writer makes them, and leaves them to the query otherwise:
// when a line is wrong, when a line is numbered against the journal's
// order (the order the stream sees them in would not be bill_seq order),
// or when more accounts have lines than it keeps.
func TestVerifyFollowsTheChainUnlessTheLinesAreWrong(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		tamper   string
		hooks    audit.VerifyHooks
		queried  bool
		problems bool
	}{
		{name: "untouched"},
		{name: "a balance after changed", tamper: `update bill_lines set balance_after = balance_after + 1 where merchant_id = $M and merchant_seq = $D2`, problems: true},
		{name: "a balance changed", tamper: `update balances set balance = balance + 1 where account_id = $FUND`, problems: true},
		{name: "more accounts than kept", hooks: audit.VerifyHooks{ChainAccountsMax: 1}, queried: true},
		{name: "a line changed", tamper: `update bill_lines set amount = amount + 1 where merchant_id = $M and merchant_seq = $D1`, queried: true, problems: true},
		{name: "lines renumbered", tamper: `update bill_lines set bill_seq = bill_seq + 1000000 where merchant_id = $M and merchant_seq = $D2;
			update bill_lines set bill_seq = bill_seq - 1 where merchant_id = $M and merchant_seq = $D3;
			update bill_lines set bill_seq = bill_seq - 1000000 + 1 where merchant_id = $M and merchant_seq = $D2`, queried: true, problems: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newVerifyFixture(t)
			if tc.tamper != "" {
				f.tamper(t, tc.tamper)
			}
			queried := false
			h := tc.hooks
			h.ChainQueried = func() { queried = true }
			rep, err := audit.New(f.l.Ledger).Verify(context.Background(), audit.WithVerifyHooks(audit.VerifyOptions{}, h))
			if err != nil {
				t.Fatal(err)
			}
			if queried != tc.queried {
				t.Errorf("the chain was queried: %v, want %v", queried, tc.queried)
			}
			if rep.OK() == tc.problems {
				t.Errorf("problems %v, want some: %v", rep.Problems, tc.problems)
			}
		})
	}
}

// The stream folds the postings into their accounts and compares the folds
// with the balances in its pass over the accounts, unless more accounts
// have postings than it keeps: then the query compares, and finds the same.
func TestVerifyFoldsTheBalancesUnlessTooMany(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tamper  string
		max     int
		queried bool
	}{
		{name: "untouched"},
		{name: "untouched, too many accounts", max: 1, queried: true},
		{name: "a balance changed", tamper: `update balances set balance = balance + 1 where account_id = $FUND`},
		{name: "a balance changed, too many accounts", tamper: `update balances set balance = balance + 1 where account_id = $FUND`, max: 1, queried: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newVerifyFixture(t)
			if tc.tamper != "" {
				f.tamper(t, tc.tamper)
			}
			queried := false
			rep, err := audit.New(f.l.Ledger).Verify(context.Background(), audit.WithVerifyHooks(audit.VerifyOptions{},
				audit.VerifyHooks{BalanceAccountsMax: tc.max, BalanceQueried: func() { queried = true }}))
			if err != nil {
				t.Fatal(err)
			}
			if queried != tc.queried {
				t.Errorf("the balances were queried: %v, want %v", queried, tc.queried)
			}
			var balance []string
			for _, p := range rep.Problems {
				if p.Check == audit.CheckBalance {
					balance = append(balance, p.String())
				}
			}
			if want := tc.tamper != ""; (len(balance) == 1) != want || len(balance) > 1 {
				t.Errorf("balance problems %v, want one: %v", balance, want)
			}
		})
	}
}
