package adjustment_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	g     *gatewaytest.Gateway
	s     *adjustment.Service
	maker adjustment.Actor
	check adjustment.Actor
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	g := gatewaytest.New(t, pgtest.NewDB(t), gatewaytest.Options{})
	f := &fixture{g: g, s: adjustment.New(g.Ledger)}
	f.maker, f.check = f.houseUser(t, "maker.op"), f.houseUser(t, "checker.op")
	return f
}

// houseUser makes a house operator in the console's users.
func (f *fixture) houseUser(t *testing.T, login string) adjustment.Actor {
	t.Helper()
	var id int64
	if err := f.g.DB().NewRaw(`insert into console_users (login, role, password_hash, totp_sealed) values (?, 'operator', '$argon2id$test', '\\x00')
		returning id`, login).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return adjustment.Actor{UserID: id, Login: login}
}

func (f *fixture) funding(t *testing.T, m int64, cur string) int64 {
	t.Helper()
	b, err := f.g.Balance(context.Background(), postings.MerchantAccount(m, postings.AccountFunding, cur))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func code(err error) postings.Code { return postings.ErrorCode(err) }

// A wrong deposit reversed: proposed by one house user, refused to the
// same user (in any session: the check is the user's id), approved by
// another, which restores every balance exactly, in currencies of 0, 2
// and 3 decimals; a second reversal of the entry is refused.
func TestReversalMakerChecker(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := gatewaytest.Merchant(t, f.g.Merchants, "JPY", "USD", "KWD")
	for _, tc := range []struct {
		cur   string
		minor int64
	}{{"JPY", 12_345}, {"USD", 100_07}, {"KWD", 1_005}} {
		gatewaytest.Deposit(t, f.g.Ledger, m.ID, tc.cur, 1) // the balance before the wrong deposit
		before := f.funding(t, m.ID, tc.cur)
		rec, err := f.g.Deposit(ctx, m.ID, tc.cur, tc.minor, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.s.Propose(ctx, f.maker, adjustment.ProposeInput{Merchant: m.ID, Reverses: rec.Seq,
			Reason: "deposit booked twice", Reference: "TICKET-1"})
		if err != nil || p.Status != adjustment.StatusProposed {
			t.Fatalf("Propose: %+v, %v", p, err)
		}
		if _, err := f.s.Approve(ctx, f.maker, m.ID, p.ID); code(err) != postings.EFORBIDDEN || !strings.Contains(err.Error(), "maker–checker") {
			t.Errorf("%s: the proposer approved: %v", tc.cur, err)
		}
		if _, err := f.s.Reject(ctx, f.maker, m.ID, p.ID); code(err) != postings.EFORBIDDEN {
			t.Errorf("%s: the proposer rejected: %v", tc.cur, err)
		}
		if f.funding(t, m.ID, tc.cur) != before+tc.minor {
			t.Fatalf("%s: a refused approval moved money", tc.cur)
		}
		done, err := f.s.Approve(ctx, f.check, m.ID, p.ID)
		if err != nil || done.Status != adjustment.StatusApproved || done.EntrySeq == 0 || done.DecidedBy != "checker.op" {
			t.Fatalf("%s: Approve: %+v, %v", tc.cur, done, err)
		}
		if got := f.funding(t, m.ID, tc.cur); got != before {
			t.Errorf("%s: funding %d after the reversal, want %d exactly", tc.cur, got, before)
		}
		world, _ := f.g.Balance(ctx, postings.MerchantAccount(m.ID, postings.AccountWorld, tc.cur))
		if world != -before {
			t.Errorf("%s: world %d, want %d", tc.cur, world, -before)
		}
		entries, _ := f.g.Entries(ctx, m.ID, done.EntrySeq, done.EntrySeq, 1)
		if len(entries) != 1 || entries[0].Kind != postings.KindAdjustment ||
			entries[0].Refs.TxID != "adj-"+itoa(p.ID)+":reverses:"+itoa(rec.Seq) {
			t.Errorf("%s: the adjustment entry: %+v", tc.cur, entries)
		}
		// Reversing it again: refused at the proposal, whoever proposes.
		if _, err := f.s.Propose(ctx, f.check, adjustment.ProposeInput{Merchant: m.ID, Reverses: rec.Seq,
			Reason: "again", Reference: "TICKET-2"}); code(err) != postings.ESTATE || !strings.Contains(err.Error(), "already reversed") {
			t.Errorf("%s: a second reversal: %v", tc.cur, err)
		}
		// Nor is the reversal itself reversed.
		if _, err := f.s.Propose(ctx, f.maker, adjustment.ProposeInput{Merchant: m.ID, Reverses: done.EntrySeq,
			Reason: "undo", Reference: "TICKET-3"}); code(err) != postings.ESTATE {
			t.Errorf("%s: reversing a reversal: %v", tc.cur, err)
		}
	}
	gatewaytest.Verify(t, f.g.Ledger)
}

// Two proposals of one reversal, both approved: the second is refused,
// and one entry reverses the deposit.
func TestReversingTwiceIsRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := gatewaytest.Merchant(t, f.g.Merchants, "USD")
	rec, err := f.g.Deposit(ctx, m.ID, "USD", 5_00, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := adjustment.ProposeInput{Merchant: m.ID, Reverses: rec.Seq, Reason: "wrong merchant", Reference: "T-9"}
	a, err1 := f.s.Propose(ctx, f.maker, in)
	b, err2 := f.s.Propose(ctx, f.maker, in)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := f.s.Approve(ctx, f.check, m.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Approve(ctx, f.check, m.ID, b.ID); code(err) != postings.ESTATE || !strings.Contains(err.Error(), "already reversed") {
		t.Errorf("the second reversal: %v", err)
	}
	if got := f.funding(t, m.ID, "USD"); got != 0 {
		t.Errorf("funding %d, want 0", got)
	}
}

// A double click and concurrent checkers: exactly one entry.
func TestConcurrentApprovalsPostOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	third := f.houseUser(t, "third.op")
	m := gatewaytest.Merchant(t, f.g.Merchants, "USD")
	gatewaytest.Deposit(t, f.g.Ledger, m.ID, "USD", 10_00)
	p, err := f.s.Propose(ctx, f.maker, adjustment.ProposeInput{Merchant: m.ID, House: "fee_revenue", Direction: "debit",
		Amount: 2_50, Currency: "USD", Reason: "monthly fee missed", Reference: "FEE-2030-03"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	seqs := make([]int64, 8)
	for i := range seqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := f.check
			if i%2 == 1 {
				who = third
			}
			done, err := f.s.Approve(ctx, who, m.ID, p.ID)
			if err != nil {
				t.Errorf("approval %d: %v", i, err)
				return
			}
			seqs[i] = done.EntrySeq
		}()
	}
	wg.Wait()
	for _, s := range seqs {
		if s != seqs[0] || s == 0 {
			t.Errorf("approvals answered entries %v, want one", seqs)
			break
		}
	}
	var n int
	if err := f.g.DB().NewRaw(`select count(*) from entries where merchant_id = ? and kind = 'ADJUSTMENT'`, m.ID).Scan(ctx, &n); err != nil || n != 1 {
		t.Errorf("%d ADJUSTMENT entries (%v), want 1", n, err)
	}
	if got := f.funding(t, m.ID, "USD"); got != 7_50 {
		t.Errorf("funding %d, want 750", got)
	}
	gatewaytest.Verify(t, f.g.Ledger)
}

// Refusals at the door name the field; a debit beyond the funding balance
// says so in words.
func TestProposeRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := gatewaytest.Merchant(t, f.g.Merchants, "USD")
	ok := adjustment.ProposeInput{Merchant: m.ID, House: "world", Direction: "credit", Amount: 100, Currency: "USD",
		Reason: "bank fee refunded", Reference: "R-1"}
	for _, tc := range []struct {
		field string
		edit  func(*adjustment.ProposeInput)
	}{
		{"reason", func(in *adjustment.ProposeInput) { in.Reason = "" }},
		{"reason", func(in *adjustment.ProposeInput) { in.Reason = "line\nbreak" }},
		{"reason", func(in *adjustment.ProposeInput) { in.Reason = strings.Repeat("x", 501) }},
		{"reference", func(in *adjustment.ProposeInput) { in.Reference = "" }},
		{"reference", func(in *adjustment.ProposeInput) { in.Reference = "a\x1b[31m" }},
		{"reference", func(in *adjustment.ProposeInput) { in.Reference = strings.Repeat("r", 65) }},
		{"houseAccount", func(in *adjustment.ProposeInput) { in.House = "network_settlement" }},
		{"direction", func(in *adjustment.ProposeInput) { in.Direction = "up" }},
		{"amount", func(in *adjustment.ProposeInput) { in.Amount = 0 }},
		{"currency", func(in *adjustment.ProposeInput) { in.Currency = "XYZ" }},
		{"reverses", func(in *adjustment.ProposeInput) { in.Reverses = 99 }},
	} {
		in := ok
		tc.edit(&in)
		if _, err := f.s.Propose(ctx, f.maker, in); postings.AsError(err).Field != tc.field {
			t.Errorf("%+v: %v, want an error naming %s", in, err, tc.field)
		}
	}
	debit := ok
	debit.Direction = "debit"
	p, err := f.s.Propose(ctx, f.maker, debit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Approve(ctx, f.check, m.ID, p.ID); code(err) != postings.EINSUFFICIENT || !strings.Contains(err.Error(), "below zero") {
		t.Errorf("a debit beyond the balance: %v", err)
	}
	// Another merchant's adjustment looks like an unknown one.
	other := gatewaytest.Merchant(t, f.g.Merchants, "USD")
	if _, err := f.s.Approve(ctx, f.check, other.ID, p.ID); code(err) != postings.ENOTFOUND {
		t.Errorf("another merchant's adjustment: %v", err)
	}
}

func itoa(n int64) string { return postings.FormatMinor(n, postings.Currency{}) }

// The list pages by id, newest first: pages of two walk every proposal of
// the merchant once, with another merchant's and one proposed between two
// pages neither repeated nor shown; a negative cursor is refused naming
// the field.
func TestListPages(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := gatewaytest.Merchant(t, f.g.Merchants, "USD")
	other := gatewaytest.Merchant(t, f.g.Merchants, "USD")
	propose := func(mid int64, ref string) int64 {
		t.Helper()
		p, err := f.s.Propose(ctx, f.maker, adjustment.ProposeInput{Merchant: mid, House: "fee_revenue", Direction: "credit",
			Amount: 1_00, Currency: "USD", Reason: "goodwill", Reference: ref})
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	var want []int64
	for i := range 5 {
		want = append([]int64{propose(m.ID, "REF-"+itoa(int64(i)))}, want...)
		propose(other.ID, "OTHER-"+itoa(int64(i)))
	}
	var got []int64
	before := int64(0)
	for page := 0; ; page++ {
		ps, err := f.s.List(ctx, m.ID, before, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			break
		}
		for _, p := range ps {
			got = append(got, p.ID)
		}
		before = ps[len(ps)-1].ID
		if page == 0 {
			propose(m.ID, "MEANWHILE") // newer than the cursor: on the first page only
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages listed %v, want %v", got, want)
	}
	if _, err := f.s.List(ctx, m.ID, -1, 2); postings.AsError(err).Field != "before" {
		t.Errorf("List before -1: %v, want a refusal naming before", err)
	}
}
