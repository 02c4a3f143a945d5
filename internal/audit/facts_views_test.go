package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/postings"
)

// remitWithFeeFacts creates a remittance of 1,000.00 EUR whose fee carries
// its rule (10 bps plus 0.50 EUR), and returns the FEE entry's sequence.
func remitWithFeeFacts(t *testing.T, f *factsFixture) int64 {
	t.Helper()
	ctx := context.Background()
	deposit(t, f.l.Ledger, f.m.ID, "EUR", 5_000_00)
	fee, err := postings.NewFeeFact(postings.FeeRuleRemittance, "corridor:DE:EUR", 1_000_00, 10, 50)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE", "bank_swift": "COBADEFFXXX",
		"account_no": "DE89370400440532013000"})
	r, err := f.l.Remit.CreateRemittance(ctx, f.m.ID, remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: b,
		Amount: 1_000_00, Fee: fee.Amount, FeeFact: &fee, Currency: "EUR", Purpose: "SUPP", Rail: "SEPA"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	var basis string
	if err := f.l.DB().QueryRowContext(ctx, `select merchant_seq, metadata->>'fee_basis' from entries where tx_id = ? and kind = 'FEE'`,
		r.TxID).Scan(&seq, &basis); err != nil || basis != "100000" {
		t.Fatalf("the remittance's FEE entry: basis %q, %v", basis, err)
	}
	return seq
}

// A remittance fee's rule is in its FEE entry: verify re-derives the fee
// from it, and names the entry when the rule was changed and the hashes
// recomputed.
func TestRemittanceFeeIsReDerived(t *testing.T) {
	t.Parallel()
	f := newFactsFixture(t)
	seq := remitWithFeeFacts(t, f)
	mustVerify(t, f.l.Ledger)
	f.tamperAll(t, strings.ReplaceAll(`update entries set metadata = jsonb_set(metadata, '{fee_bps}', '"5"') where merchant_id = $M and merchant_seq = $SEQ;`+
		strings.ReplaceAll(rechainSQL, "$FROM", "$SEQ"), "$SEQ", itoa(seq)))
	rep := verifyAll(t, f.verifyFixture)
	for _, p := range rep.Problems {
		if p.Check == "fee_amount" && p.Seq == seq && strings.Contains(p.Detail, "the rule remittance corridor:DE:EUR gives 100") {
			return
		}
	}
	t.Fatalf("no fee_amount problem for entry %d in %v", seq, rep.Problems)
}

// The auditor reads the rates' history, the authorizations, the holds and
// the remittances through views without secrets, and cannot write them
// nor read the tables behind them.
func TestAuditorReadsTheFactsViews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFactsFixture(t)
	remitWithFeeFacts(t, f)
	conn, err := f.l.DB().DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `set role gateway_auditor`); err != nil {
		t.Fatal(err)
	}
	// The connection goes back to the pool as the gateway's user.
	defer conn.ExecContext(ctx, `reset role`) //nolint:errcheck
	for _, q := range []string{
		`select count(*) from audit_fx_rates where version = ` + itoa(f.rateVers),
		`select count(*) from audit_authorizations where auth_id = '` + f.fxAuth + `'`,
		`select count(*) from audit_holds where auth_id = '` + f.fxAuth + `'`,
		`select count(*) from audit_remittances where beneficiary_country = 'DE'`,
		`select count(*) from audit_remittance_history`,
		`select count(*) + 1 from audit_period_closes`, // readable; the fixture closes nothing
	} {
		var n int
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil || n == 0 {
			t.Errorf("an auditor's %q: %d rows, %v", q, n, err)
		}
	}
	for _, q := range []string{
		`insert into audit_fx_rates (base, quote, mid_rate, spread_bps, source, set_at) values ('USD', 'EUR', 1, 0, 'operator', now())`,
		`update audit_authorizations set held = 0`,
		`delete from audit_holds`,
		`update audit_remittances set status = 'SETTLED'`,
		`select * from fx_rate_versions`,
		`insert into fx_rate_versions (base, quote, mid_rate, spread_bps, source, set_at) values ('USD', 'EUR', 1, 0, 'operator', now())`,
		`select * from authorizations`,
		`select * from remittances`,
		`select * from remittance_history`,
		`delete from audit_period_closes`,
	} {
		_, err := conn.ExecContext(ctx, q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("an auditor's %q: %v, want 42501 (insufficient_privilege)", q, err)
		}
	}
	// No secret column: the views list theirs, and none is a card number,
	// a key, a sealed field, a beneficiary's details or a callback URL.
	rows, err := conn.QueryContext(ctx, `select table_name, column_name from information_schema.columns
		where table_name in ('audit_fx_rates', 'audit_authorizations', 'audit_holds', 'audit_remittances', 'audit_remittance_history')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		n++
		for _, secret := range []string{"pan", "key", "sealed", "secret", "beneficiary", "account_no", "callback", "payer", "merchant_name"} {
			if strings.Contains(column, secret) && column != "beneficiary_country" {
				t.Errorf("%s.%s looks secret (%s)", table, column, secret)
			}
		}
	}
	if err := rows.Err(); err != nil || n < 20 {
		t.Fatalf("%d columns, %v", n, err)
	}
}
