package audit_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// closeFixture is a merchant with two deposits on 26 November 2026 and one
// on the 27th, the 26th closed on the 27th, signed by signer.
type closeFixture struct {
	g      *gatewaytest.Gateway
	m      int64
	signer *audit.Signer
	close  *audit.PeriodClose
	now    *atomic.Pointer[time.Time]
}

func newCloseFixture(t *testing.T) *closeFixture {
	t.Helper()
	f := &closeFixture{now: &atomic.Pointer[time.Time]{}, signer: newTestSigner(t)}
	f.at(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	f.g = gatewaytest.New(t, nil, gatewaytest.Options{Ledger: ledger.Config{Now: func() time.Time { return *f.now.Load() }}})
	f.m = newMerchant(t, f.g.Ledger, "USD", "EUR").ID
	deposit(t, f.g.Ledger, f.m, "USD", 100_00)
	f.at(time.Date(2026, 11, 26, 23, 59, 59, 999999000, time.UTC))
	deposit(t, f.g.Ledger, f.m, "EUR", 7_00)
	f.at(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	deposit(t, f.g.Ledger, f.m, "USD", 5_00)
	f.at(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	var err error
	if f.close, err = audit.New(f.g.Ledger).ClosePeriod(context.Background(), f.signer, f.m, audit.PeriodDay, "2026-11-26"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *closeFixture) at(t time.Time) { f.now.Store(&t) }

// tamper runs stmt ($M the merchant) with the append-only triggers of the
// journal and of the closes disabled, as a superuser could on a copy.
func (f *closeFixture) tamper(t *testing.T, stmt string) {
	t.Helper()
	stmt = triggersOff([]string{"entries", "postings", "bill_lines", "audit_period_closes"}, strings.ReplaceAll(stmt, "$M", fmt.Sprint(f.m)))
	if _, err := f.g.DB().DB.ExecContext(context.Background(), stmt); err != nil {
		t.Fatalf("tampering: %v\n%s", err, stmt)
	}
}

// A close records the head before the period's end and every account's
// balance up to it; it is refused before the period has ended and a
// second time.
func TestClosePeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newCloseFixture(t)
	c := f.close
	if c.HeadSeq != 2 || c.End.String() != "2026-11-27T00:00:00.000000Z" || c.Start != "2026-11-26" {
		t.Fatalf("close %+v: want head 2 and end 2026-11-27", c)
	}
	got := map[string]int64{}
	for _, b := range c.Balances {
		got[b.Account] = b.Balance
	}
	fundUSD, fundEUR := fmt.Sprintf("m:%d:funding:USD", f.m), fmt.Sprintf("m:%d:funding:EUR", f.m)
	if got[fundUSD] != 100_00 || got[fundEUR] != 7_00 || len(got) != 4 {
		t.Fatalf("balances %v: want 10000 USD and 700 EUR funding and their world accounts", got)
	}
	sig, _ := hex.DecodeString(c.Signature)
	if !audit.VerifySignature(f.signer.Public(), audit.PurposePeriodClose, c.Statement(), sig) {
		t.Fatal("the close's signature does not verify")
	}
	svc := audit.New(f.g.Ledger)
	for _, tt := range []struct {
		kind, period string
		code         postings.Code
	}{
		{audit.PeriodDay, "2026-11-26", postings.ECONFLICT}, // closed already
		{audit.PeriodDay, "2026-11-27", postings.ESTATE},    // not over
		{audit.PeriodMonth, "2026-11", postings.ESTATE},     // not over
		{audit.PeriodDay, "2026-11-31", postings.EINVALID},
	} {
		if _, err := svc.ClosePeriod(ctx, f.signer, f.m, tt.kind, tt.period); postings.ErrorCode(err) != tt.code {
			t.Errorf("close %s %s: %v, want %s", tt.kind, tt.period, err, tt.code)
		}
	}
	f.at(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	month, err := svc.ClosePeriod(ctx, f.signer, f.m, audit.PeriodMonth, "2026-11")
	if err != nil || month.HeadSeq != 3 {
		t.Fatalf("the month: %+v, %v", month, err)
	}
	rep, err := svc.Verify(ctx, audit.VerifyOptions{PublicKey: f.signer.Public()})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v, %v", err, rep.Problems)
	}
}

// Verify recomputes every close from the journal: each way of changing a
// closed period, or the close itself, is a named period_close failure.
func TestClosedPeriodTamper(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tamper string
		resign bool   // re-sign the changed close with another key
		want   string // in a period_close problem's detail; "" for none
	}{
		{name: "untouched"},
		{name: "amount in the closed day changed with recomputed hashes and balances",
			tamper: `update postings set amount = amount + 1 where merchant_id = $M and merchant_seq = 1;
				update balances set balance = balance + 1 where account_id = (select destination_id from postings where merchant_id = $M and merchant_seq = 1);
				update balances set balance = balance - 1 where account_id = (select source_id from postings where merchant_id = $M and merchant_seq = 1);
				update bill_lines set amount = amount + 1, balance_after = balance_after + 1 where merchant_id = $M and merchant_seq = 1;
				update bill_lines set balance_after = balance_after + 1 where merchant_id = $M and merchant_seq = 3;` +
				strings.ReplaceAll(rechainSQL, "$FROM", "1"),
			want: "closing balance of m:"},
		{name: "close's balance edited", tamper: `update audit_period_closes set balances = jsonb_set(balances, '{0,balance}', '1') where merchant_id = $M`,
			want: "its columns are not the statement it signed"},
		{name: "close re-signed by another key", resign: true, want: "another key signed it"},
		{name: "entry back-dated into the closed day", tamper: `update entries set created_at = '2026-11-26 12:00:00+00' where merchant_id = $M and merchant_seq = 3;` +
			strings.ReplaceAll(rechainSQL, "$FROM", "3"),
			want: "is back-dated or was inserted"},
		{name: "closed day rolled back", tamper: `delete from bill_lines where merchant_id = $M and merchant_seq >= 2;
				delete from postings where merchant_id = $M and merchant_seq >= 2;
				delete from entries where merchant_id = $M and merchant_seq >= 2;
				update ledger_heads set last_seq = 1, last_hash = (select hash from entries where merchant_id = $M and merchant_seq = 1) where merchant_id = $M`,
			want: "its head is entry 2, the journal ends at 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newCloseFixture(t)
			if tc.tamper != "" {
				f.tamper(t, tc.tamper)
			}
			if tc.resign {
				// A forger with a key of their own rewrites the close
				// consistently: the statement matches its columns, and
				// only the key tells.
				c := *f.close
				c.Balances = append([]audit.CloseBalance(nil), c.Balances...)
				c.Balances[0].Balance++
				other := newTestSigner(t)
				c.KeyID = other.KeyID()
				sig := other.Sign(audit.PurposePeriodClose, c.Statement())
				f.tamper(t, fmt.Sprintf(`update audit_period_closes set balances = jsonb_set(balances, '{0,balance}', '%d'), key_id = '%s',
					signed = decode('%x', 'hex'), signature = decode('%x', 'hex') where merchant_id = $M`,
					c.Balances[0].Balance, c.KeyID, append([]byte(audit.PurposePeriodClose+"\n"), c.Statement()...), sig))
			}
			rep, err := audit.New(f.g.Ledger).Verify(context.Background(), audit.VerifyOptions{PublicKey: ed25519.PublicKey(f.signer.Public())})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if !rep.OK() {
					t.Fatalf("problems in an untouched copy: %v", rep.Problems)
				}
				return
			}
			for _, p := range rep.Problems {
				if p.Check == audit.CheckPeriodClose && strings.Contains(p.Detail, tc.want) {
					return
				}
			}
			t.Fatalf("no period_close problem saying %q in %v", tc.want, rep.Problems)
		})
	}
}
