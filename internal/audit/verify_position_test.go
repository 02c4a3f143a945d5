package audit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/network"
)

// positionFixture is a merchant whose USD card paid a EUR purchase: a
// cross-border fee held with the authorization and taken at clearing, and
// an over-capture left owed.
type positionFixture struct {
	l *gatewaytest.Gateway
	m int64
}

func newPositionFixture(t *testing.T) *positionFixture {
	t.Helper()
	ctx := context.Background()
	f := &positionFixture{l: gatewaytest.New(t, nil, gatewaytest.Options{})}
	m := newMerchant(t, f.l.Ledger, "USD")
	f.m = m.ID
	deposit(t, f.l.Ledger, f.m, "USD", 1_000_00)
	c, err := f.l.Cards.CreateCard(ctx, f.m, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 50_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1.0843", 0); err != nil {
		t.Fatal(err)
	}
	a, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "pos-1", CardNo: c.CardNo, Amount: 40_00, Currency: "EUR"})
	if err != nil || !a.Approved || a.Fee == 0 {
		t.Fatalf("authorization %+v %v", a, err)
	}
	if _, err := f.l.Network.Clear(ctx, network.ClearRequest{MessageID: "pos-2", AuthID: a.AuthID, Amount: 47_00}); err != nil {
		t.Fatal(err)
	}
	return f
}

// tamper runs stmt on the copy with the bill's append-only trigger off ($M
// is the merchant), as a superuser could.
func (f *positionFixture) tamper(t *testing.T, stmt string) {
	t.Helper()
	stmt = strings.ReplaceAll(stmt, "$M", fmt.Sprint(f.m))
	_, err := f.l.DB().ExecContext(context.Background(), `alter table bill_lines disable trigger bill_lines_append_only; `+
		stmt+`; alter table bill_lines enable trigger bill_lines_append_only`)
	if err != nil {
		t.Fatal(err)
	}
}

// The fee identity (type=FEE sums to fee revenue) holds on the untouched
// copy and is a named failure, CheckFees, when a FEE line is retyped or
// its amount moved to another line; the bill check names the retyped line
// too, since its type is recomputed from the entry.
func TestVerifyFeeIdentity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper string
		want   []string // checks that must be reported
	}{
		{name: "untouched"},
		{name: "the clearing's fee retyped", tamper: `update bill_lines set kind = 'CARD_SETTLE'
			where merchant_id = $M and kind = 'FEE' and merchant_seq = (select max(merchant_seq) from entries where merchant_id = $M and kind = 'FEE')`,
			want: []string{audit.CheckFees, audit.CheckBill}},
		{name: "the authorization's fee line retyped", tamper: `update bill_lines set kind = 'CARD_AUTH'
			where merchant_id = $M and kind = 'FEE' and amount < 0 and merchant_seq = (select merchant_seq from entries where merchant_id = $M and kind = 'CARD_AUTH')`,
			want: []string{audit.CheckFees, audit.CheckBill}},
		{name: "a receivable retyped as a settlement", tamper: `update bill_lines set kind = 'CARD_SETTLE'
			where merchant_id = $M and kind = 'RECEIVABLE'`,
			want: []string{audit.CheckBill}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newPositionFixture(t)
			if tc.tamper != "" {
				f.tamper(t, tc.tamper)
			}
			rep, err := audit.New(f.l.Ledger).Verify(context.Background(), audit.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil && !rep.OK() {
				t.Fatalf("problems in an untouched journal: %v", rep.Problems)
			}
			for _, w := range tc.want {
				found := false
				for _, p := range rep.Problems {
					found = found || (p.Check == w && p.Merchant == f.m)
				}
				if !found {
					t.Errorf("no %s problem in %v", w, rep.Problems)
				}
			}
		})
	}
}

// Entries booked before sql/0022 keep the lines they were given: under
// bill_rules_legacy their lines are checked by the old rules (the entry's
// kind, funding and available accounts only). Here the whole journal is
// declared legacy, so the new lines' types (FEE inside CARD_AUTH,
// RECEIVABLE) are wrong by the old rules and named; the fee identity is
// not checked over legacy entries.
func TestVerifyChecksLegacyEntriesByTheOldRules(t *testing.T) {
	t.Parallel()
	f := newPositionFixture(t)
	f.tamper(t, `alter table bill_rules_legacy disable trigger bill_rules_legacy_append_only;
		insert into bill_rules_legacy (merchant_id, last_seq) select merchant_id, last_seq from ledger_heads where merchant_id = $M;
		alter table bill_rules_legacy enable trigger bill_rules_legacy_append_only`)
	rep, err := audit.New(f.l.Ledger).Verify(context.Background(), audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bill := 0
	for _, p := range rep.Problems {
		switch p.Check {
		case audit.CheckBill:
			bill++
		case audit.CheckFees:
			t.Errorf("the fee identity was checked over legacy entries: %s", p)
		}
	}
	if bill == 0 {
		t.Fatalf("new-style lines passed as legacy ones: %v", rep.Problems)
	}
}
