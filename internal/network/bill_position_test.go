package network_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// The bill is the whole position (issue 29, point 2; docs/finance.md):
// what a card owes, its holds and every fee are bill lines whose type says
// what the money did, and the statement has a row for each balance.

// allBillLines is the merchant's whole bill, in bill_seq order.
func allBillLines(t *testing.T, l *gatewaytest.Gateway, m int64) []bill.Line {
	t.Helper()
	ctx := context.Background()
	r, err := l.Bills.BillRange(ctx, m, time.Unix(0, 0), time.Now().Add(1000*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var out []bill.Line
	if err := l.Bills.BillStream(ctx, m, r, 0, func(ls []bill.Line) error { out = append(out, ls...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// lineTexts describes the lines that keep passes, as "TYPE ACCOUNTTYPE
// amount", sorted.
func lineTexts(lines []bill.Line, keep func(*bill.Line) bool) []string {
	var out []string
	for i := range lines {
		if l := &lines[i]; keep(l) {
			out = append(out, fmt.Sprintf("%s %s %d", l.Kind, l.AccountTypeName(), l.Amount))
		}
	}
	slices.Sort(out)
	return out
}

// statementRow is the statement of account a over [from, to), failing
// unless it ties: opening + movements = closing, closing + later = balance.
func statementRow(t *testing.T, l *gatewaytest.Gateway, m int64, a postings.Account, from, to time.Time) audit.StatementAccount {
	t.Helper()
	accts, err := audit.New(l.Ledger).StatementAccounts(context.Background(), m, from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range accts {
		if s.Account.Address() != a.Address() {
			continue
		}
		if s.Opening+s.Moved != s.Closing || s.Closing+s.After != s.Balance {
			t.Fatalf("statement of %s does not tie: %+v", a.Address(), s)
		}
		return s
	}
	t.Fatalf("the statement has no row for %s (rows: %+v)", a.Address(), accts)
	return audit.StatementAccount{}
}

// An over-capture: what the card lacks is a RECEIVABLE line on its
// receivable with its counter-line on the card, in the period of the
// capture, and the statement's receivable row closes at what is owed. A
// top-up the next day repays it first: RECEIVABLE_RECOVERY on the funding
// account and the receivable, in the top-up's period, and only the rest is
// CARD_TRANSFER_IN.
func TestOverCaptureIsAReceivableAndATopUpRecoversIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The card holds 29.65; the network captures 5.93 more (20 %, the
	// tolerance).
	f := newBoundsFixture(t, 29_65, network.Bounds{})
	day1 := f.now.Load().Truncate(24 * time.Hour)
	a := f.auth(t, f.card.CardNo, 29_65, "USD")
	if _, err := f.clear(a.AuthID, 35_58); err != nil {
		t.Fatal(err)
	}
	lines := allBillLines(t, f.l, f.m.ID)
	got := lineTexts(lines, func(l *bill.Line) bool { return l.AuthID == a.AuthID && l.Kind != postings.KindCardAuth })
	want := []string{"CARD_SETTLE AVAILABLE -593", "CARD_SETTLE HELD -2965", "RECEIVABLE AVAILABLE 593", "RECEIVABLE RECEIVABLE -593"}
	if !slices.Equal(got, want) {
		t.Fatalf("the capture's lines %v, want %v", got, want)
	}
	recv := cards.ReceivableAccount(f.m.ID, "USD", f.card.CardNo)
	day2 := day1.Add(24 * time.Hour)
	if s := statementRow(t, f.l, f.m.ID, recv, day1, day2); s.Opening != 0 || s.Closing != -5_93 || s.Lines != 1 {
		t.Fatalf("the receivable's statement on the capture's day: %+v", s)
	}

	f.advance(day2.Add(time.Hour).Sub(*f.now.Load()))
	tr, err := f.l.Cards.Transfer(ctx, f.m.ID, cards.TransferInput{CardNo: f.card.CardNo, Amount: 10_00, Currency: "USD", Direction: "IN"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines = allBillLines(t, f.l, f.m.ID)
	got = lineTexts(lines, func(l *bill.Line) bool { return l.TxID == tr.TxID && !l.CreatedAt.Before(day2) })
	want = []string{"CARD_TRANSFER_IN AVAILABLE 407", "CARD_TRANSFER_IN FUNDING -407",
		"RECEIVABLE_RECOVERY FUNDING -593", "RECEIVABLE_RECOVERY RECEIVABLE 593"}
	if !slices.Equal(got, want) {
		t.Fatalf("the top-up's lines %v, want %v", got, want)
	}
	if s := statementRow(t, f.l, f.m.ID, recv, day2, day2.Add(24*time.Hour)); s.Opening != -5_93 || s.Closing != 0 || s.Moved != 5_93 {
		t.Fatalf("the receivable's statement on the top-up's day: %+v", s)
	}
	mustVerify(t, f.l)
}

// Holds are lines of the card's held funds: the authorization puts money
// there, a partial reversal, the capture and the release of the rest take
// it out, and the statement's held row goes from 0 back to 0.
func TestHoldsAreBillLines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newBoundsFixture(t, 100_00, network.Bounds{})
	start := f.now.Load().Add(-time.Second)
	a := f.auth(t, f.card.CardNo, 30_00, "USD")
	held := cards.HeldAccount(f.m.ID, "USD", f.card.CardNo)
	if s := statementRow(t, f.l, f.m.ID, held, start, f.now.Load().Add(time.Second)); s.Closing != 30_00 {
		t.Fatalf("held after the authorization: %+v", s)
	}
	if _, err := f.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: f.msg(), AuthID: a.AuthID, Amount: 10_00}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.clear(a.AuthID, 5_00); err != nil {
		t.Fatal(err)
	}
	got := lineTexts(allBillLines(t, f.l, f.m.ID), func(l *bill.Line) bool {
		return l.AuthID == a.AuthID && l.AccountType == postings.AccountCardHeld
	})
	want := []string{"CARD_AUTH HELD 3000", "CARD_AUTH_RELEASE HELD -1500", "CARD_SETTLE HELD -500", "REVERSAL HELD -1000"}
	if !slices.Equal(got, want) {
		t.Fatalf("the hold's lines %v, want %v", got, want)
	}
	if s := statementRow(t, f.l, f.m.ID, held, start, f.now.Load().Add(time.Second)); s.Opening != 0 || s.Moved != 0 || s.Lines != 4 {
		t.Fatalf("held over the hold's life: %+v", s)
	}
	mustVerify(t, f.l)
}
