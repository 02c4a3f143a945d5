package audit_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
)

// factsFixture is a verifyFixture with a second hold on its USD card, in
// EUR: a CARD_AUTH that converts, with its rate version and cross-border
// fee in its facts (issue 30 point 2).
type factsFixture struct {
	*verifyFixture
	fxSeq    int64  // the foreign CARD_AUTH's merchant_seq
	fxAuth   string // its authorization
	usdAuth  string // the fixture's first hold, in the card's currency
	rateVers int64  // the rate version the CARD_AUTH names
	trfSeq   int64  // a top-up of the USD card from EUR funding: a conversion with facts
}

func newFactsFixture(t *testing.T) *factsFixture {
	t.Helper()
	ctx := context.Background()
	f := &factsFixture{verifyFixture: newVerifyFixture(t)}
	// A rate set now: the seeded rates may be older than the maximum age.
	if _, err := f.l.FX.Set(ctx, "EUR", "USD", "1.0873", 25); err != nil {
		t.Fatal(err)
	}
	res, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: "verify-fx-hold", CardNo: f.card.CardNo,
		Amount: 12_34, Currency: "EUR"})
	if err != nil || !res.Approved {
		t.Fatalf("foreign authorization: %+v, %v", res, err)
	}
	f.fxAuth = res.AuthID
	var version string
	if err := f.l.DB().QueryRowContext(ctx, `select merchant_seq, metadata->>'fx_rate_version' from entries where auth_id = ? and kind = 'CARD_AUTH'`,
		f.fxAuth).Scan(&f.fxSeq, &version); err != nil {
		t.Fatal(err)
	}
	if f.rateVers, err = strconv.ParseInt(version, 10, 64); err != nil {
		t.Fatalf("the foreign CARD_AUTH names rate version %q: %v", version, err)
	}
	if err := f.l.DB().QueryRowContext(ctx, `select auth_id from authorizations where card_no = ? and txn_currency = 'USD'`,
		f.card.CardNo).Scan(&f.usdAuth); err != nil {
		t.Fatal(err)
	}
	// A top-up across currencies at the same rate version (EUR funding to
	// the USD card): the transfer's conversion in its facts.
	deposit(t, f.l.Ledger, f.m.ID, "EUR", 100_00)
	trf, err := f.l.Cards.Transfer(ctx, f.m.ID, cards.TransferInput{CardNo: f.card.CardNo, Amount: 12_34, Currency: "EUR",
		Direction: cards.DirectionIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.l.DB().QueryRowContext(ctx, `select merchant_seq from entries where tx_id = ?`, trf.TxID).Scan(&f.trfSeq); err != nil {
		t.Fatal(err)
	}
	// Three deposits after them, as the fixture has after its first hold:
	// they stay the three last entries, which the tamper cases rewrite.
	for i := range 3 {
		deposit(t, f.l.Ledger, f.m.ID, "USD", int64(2_00*(i+1)))
	}
	if f.readDeposits(t); f.deposits[0] <= f.fxSeq {
		t.Fatalf("deposits %v after the foreign hold %d", f.deposits, f.fxSeq)
	}
	return f
}

// expand writes the fixture's facts into a tampering statement: $FXSEQ,
// $FXAUTH, $USDAUTH, $RATEV and $TRFSEQ.
func (f *factsFixture) expand(stmt string) string {
	return strings.NewReplacer("$FXSEQ", strconv.FormatInt(f.fxSeq, 10), "$FXAUTH", f.fxAuth, "$USDAUTH", f.usdAuth,
		"$RATEV", strconv.FormatInt(f.rateVers, 10), "$TRFSEQ", strconv.FormatInt(f.trfSeq, 10)).Replace(stmt)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// verifyAll verifies every merchant of f, failing the test on an error.
func verifyAll(t *testing.T, f *verifyFixture) *audit.Report {
	t.Helper()
	rep, err := audit.New(f.l.Ledger).Verify(context.Background(), audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// readDeposits reads the sequences of f.m's three last deposits.
func (f *verifyFixture) readDeposits(t *testing.T) {
	t.Helper()
	rows, err := f.l.DB().QueryContext(context.Background(), `select merchant_seq from entries where merchant_id = ? and kind = 'DEPOSIT'
		order by merchant_seq desc limit 3`, f.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for i := 2; rows.Next(); i-- {
		if err := rows.Scan(&f.deposits[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil || f.deposits[0] == 0 {
		t.Fatalf("deposits %v: %v", f.deposits, err)
	}
}
