package audit_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
)

// transferFixture is a merchant in JPY and KWD (0 and 3 decimals) with a
// card in each and two transfers across them: a top-up of the KWD card
// from JPY funding and a withdrawal from it into JPY funding (whose card
// amount the inverse rate derives).
type transferFixture struct {
	*verifyFixture
	in, out int64 // the transfers' merchant_seq
}

func newTransferFixture(t *testing.T) *transferFixture {
	t.Helper()
	ctx := context.Background()
	f := &transferFixture{verifyFixture: newVerifyFixture(t)}
	g := f.l
	m := newMerchant(t, g.Ledger, "JPY", "KWD")
	f.m = m // the tampering's $M
	deposit(t, g.Ledger, m.ID, "JPY", 1_000_000)
	for _, r := range [][2]string{{"JPY", "KWD"}, {"KWD", "JPY"}} {
		mid := map[string]string{"JPY": "0.00204", "KWD": "489.5"}[r[0]]
		if _, err := g.FX.Set(ctx, r[0], r[1], mid, 50); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Cards.UpsertBIN(ctx, cards.BIN{Bin: "45329701", Currency: "KWD", Network: "VISA", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	c, err := g.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "45329701", Currency: "KWD"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq := func(dir string, amount int64) int64 {
		res, err := g.Cards.Transfer(ctx, m.ID, cards.TransferInput{CardNo: c.CardNo, Amount: amount, Currency: "JPY", Direction: dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var s int64
		if err := g.DB().QueryRowContext(ctx, `select merchant_seq from entries where tx_id = ?`, res.TxID).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	f.in, f.out = seq(cards.DirectionIn, 12345), seq(cards.DirectionOut, 1234)
	return f
}

// A transfer between a 0-decimal and a 3-decimal currency whose amounts
// are changed, moved and recorded alike with the hashes recomputed, is a
// named fx_amount failure: its facts no longer re-derive. One changed in
// its postings only is one too: the postings are not the facts'. Each
// case is on a copy of its own; the untouched copy verifies.
func TestTransferFactsAcrossDecimals(t *testing.T) {
	t.Parallel()
	// set changes a metadata amount of the entry $S by $D and rechains.
	const set = `update entries set metadata = jsonb_set(metadata, '{$KEY}', to_jsonb(((metadata->>'$KEY')::bigint + $D)::text))
		where merchant_id = $M and merchant_seq = $S;`
	// leg changes the posting of $CUR of the entry $S by $D.
	const leg = `update postings set amount = amount + $D where merchant_id = $M and merchant_seq = $S and currency = '$CUR';`
	for _, tc := range []struct {
		name, tamper string
		in           bool   // the top-up, else the withdrawal
		want         string // in the fx_amount problem; "" for none
	}{
		{name: "untouched"},
		// ¥12,345 at 0.00204 less 50 bps gave 25.057 KWD.
		{name: "top-up's converted amount", in: true, tamper: strings.NewReplacer("$CUR", "KWD", "$KEY", "fx_amount").Replace(leg + set),
			want: "fx_amount 25058, the rate gives 25057"},
		// ¥1,234 paid cost the card 2.534 KWD at 489.5 less 50 bps.
		{name: "withdrawal's card amount", tamper: strings.NewReplacer("$CUR", "KWD", "$KEY", "fx_from_amount").Replace(leg + set),
			want: "fx_from_amount 2535, the rate gives 2534"},
		{name: "withdrawal's yen amount", tamper: strings.NewReplacer("$CUR", "JPY", "$KEY", "fx_amount").Replace(leg + set),
			want: "fx_from_amount 2534, the rate gives 2536"},
		{name: "top-up's posting only", in: true, tamper: strings.NewReplacer("$CUR", "JPY").Replace(leg),
			want: "the entry moves 12346 JPY into the FX position"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newTransferFixture(t)
			s := f.out
			if tc.in {
				s = f.in
			}
			if tc.tamper != "" {
				stmt := strings.NewReplacer("$D", "1", "$S", strconv.FormatInt(s, 10)).Replace(tc.tamper)
				f.tamperAll(t, stmt+strings.ReplaceAll(rechainSQL, "$FROM", strconv.FormatInt(s, 10)))
			}
			rep := verifyAll(t, f.verifyFixture)
			if tc.want == "" {
				if !rep.OK() {
					t.Fatalf("problems in an untouched copy: %v", rep.Problems)
				}
				return
			}
			for _, p := range rep.Problems {
				if p.Check == audit.CheckFXAmount && p.Merchant == f.m.ID && p.Seq == s && strings.Contains(p.Detail, tc.want) {
					return
				}
			}
			t.Fatalf("no fx_amount problem of entry %d saying %q in %v", s, tc.want, rep.Problems)
		})
	}
}
