package audit_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
)

// rechainSQL recomputes, as a tamperer would, the hash of every entry of
// the merchant from sequence $FROM on and its head, from the documented
// encoding (entry_canonical): the chain is consistent again, and only a
// checkpoint kept outside the database can tell.
const rechainSQL = `
	do $$
	declare s bigint;
	begin
	    for s in select merchant_seq from entries where merchant_id = $M and merchant_seq >= $FROM order by merchant_seq loop
	        update entries e set prev_hash = p.hash from entries p
	        where p.merchant_id = $M and p.merchant_seq = s - 1 and e.merchant_id = $M and e.merchant_seq = s;
	        update entries set hash = sha256(prev_hash || entry_canonical(merchant_id, merchant_seq))
	        where merchant_id = $M and merchant_seq = s;
	    end loop;
	    update ledger_heads h set last_seq = e.merchant_seq, last_hash = e.hash
	    from (select merchant_seq, hash from entries where merchant_id = $M order by merchant_seq desc limit 1) e
	    where h.merchant_id = $M;
	end
	$$`

// tamperAll runs stmt with every append-only and no-truncate trigger of the
// journal and the accounts disabled, as a superuser could on a copy.
func (f *verifyFixture) tamperAll(t *testing.T, stmt string) {
	t.Helper()
	f.tamper(t, triggersOff([]string{"entries", "postings", "bill_lines", "accounts"}, stmt))
}

// triggersOff wraps stmt in the disabling and re-enabling of the tables'
// append-only and no-truncate triggers.
func triggersOff(tables []string, stmt string) string {
	var b strings.Builder
	for _, tb := range tables {
		fmt.Fprintf(&b, "alter table %[1]s disable trigger %[1]s_append_only; alter table %[1]s disable trigger %[1]s_no_truncate;\n", tb)
	}
	b.WriteString(stmt + ";\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "alter table %[1]s enable trigger %[1]s_append_only; alter table %[1]s enable trigger %[1]s_no_truncate;\n", tb)
	}
	return b.String()
}

// The tamper matrix of issue 30: on a copy with activity (a fresh test
// database: deposits, a card, a hold), each way of changing what the
// journal proves is a named failure, and the untouched copy has none. A
// checkpoint is signed before the tampering and verify is given it with
// the real public key.
func TestTamperMatrix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper string
		// resign replaces the checkpoint's signature (the key cases).
		resign func(t *testing.T, c *audit.Checkpoint)
		want   []wantProblem // each must be reported; none for the untouched copy
		only   bool          // and nothing else is
	}{
		{name: "untouched"},
		{name: "account address changed", tamper: `update accounts set address = address || ':moved' where id = $FUND`,
			want: []wantProblem{{audit.CheckAccount, 0, "the address is not its identity's"}}, only: true},
		{name: "account type changed", tamper: `update accounts set type = 'fee_revenue' where id = $FUND`,
			want: []wantProblem{{audit.CheckAccount, 0, "the address is not its identity's, m:"}, {audit.CheckHashChain, 1, "stored hash"}}},
		{name: "two accounts of one identity", tamper: `update accounts set address = address || ':old' where id = $FUND;
			insert into accounts (merchant_id, type, currency, address) values ($M, 'funding', 'USD', 'm:$M:funding:USD');
			insert into balances (account_id, merchant_id, currency, constrained) select id, $M, 'USD', true from accounts where address = 'm:$M:funding:USD'`,
			want: []wantProblem{{audit.CheckAccount, 0, "2 accounts (ids"}, {audit.CheckAccount, 0, "the address is not its identity's"}}},
		{name: "balance row of another currency", tamper: `update balances set currency = 'EUR' where account_id = $FUND`,
			want: []wantProblem{{audit.CheckAccount, 0, "its balance row says"}}, only: true},
		{name: "posting moved to another account", tamper: `update postings set destination_id = (select id from accounts where merchant_id = $M and type = 'card_available')
			where merchant_id = $M and merchant_seq = $D1`,
			want: []wantProblem{{audit.CheckHashChain, 1, "stored hash"}, {audit.CheckBalance, 0, "the postings sum to"}}},
		{name: "rolled-back tail", tamper: `delete from bill_lines where merchant_id = $M and merchant_seq >= $D2;
			delete from postings where merchant_id = $M and merchant_seq >= $D2;
			delete from entries where merchant_id = $M and merchant_seq >= $D2;
			update ledger_heads set last_seq = $D1, last_hash = (select hash from entries where merchant_id = $M and merchant_seq = $D1) where merchant_id = $M`,
			want: []wantProblem{{audit.CheckCheckpointRollback, 0, "the journal ends at entry"}}},
		{name: "rewritten entry with recomputed hashes", tamper: `update entries set tx_id = 'tx_rewritten' where merchant_id = $M and merchant_seq = $D2;` +
			strings.ReplaceAll(rechainSQL, "$FROM", "$D2"),
			want: []wantProblem{{audit.CheckCheckpointDiverged, 3, "was rewritten, inserted or removed"}}, only: true},
		// A DEPOSIT slipped in before the last two deposits, the later
		// entries renumbered after it and every hash recomputed.
		{name: "forged entry inside the checkpointed range", tamper: `alter table postings drop constraint postings_entry_fkey;
			alter table bill_lines drop constraint bill_lines_entry_fkey;
			update bill_lines set merchant_seq = merchant_seq + 1000000 where merchant_id = $M and merchant_seq >= $D2;
			update postings set merchant_seq = merchant_seq + 1000000 where merchant_id = $M and merchant_seq >= $D2;
			update entries set merchant_seq = merchant_seq + 1000000 where merchant_id = $M and merchant_seq >= $D2;
			update bill_lines set merchant_seq = merchant_seq - 999999 where merchant_id = $M and merchant_seq > 1000000;
			update postings set merchant_seq = merchant_seq - 999999 where merchant_id = $M and merchant_seq > 1000000;
			update entries set merchant_seq = merchant_seq - 999999 where merchant_id = $M and merchant_seq > 1000000;
			insert into entries (merchant_id, merchant_seq, kind, created_at, tx_id, metadata, prev_hash, hash)
			select merchant_id, $D2, kind, created_at, 'tx_forged', metadata, prev_hash, hash from entries where merchant_id = $M and merchant_seq = $D1;
			insert into postings (merchant_id, merchant_seq, idx, source_id, destination_id, amount, currency)
			select merchant_id, $D2, idx, source_id, destination_id, amount, currency from postings where merchant_id = $M and merchant_seq = $D1;` +
			strings.ReplaceAll(rechainSQL, "$FROM", "$D2"),
			want: []wantProblem{{audit.CheckCheckpointDiverged, 3, "was rewritten, inserted or removed"}}},
		{name: "swapped checkpoint key", resign: func(t *testing.T, c *audit.Checkpoint) {
			other := newTestSigner(t)
			c.KeyID, c.Signature = other.KeyID(), fmt.Sprintf("%x", other.Sign(audit.PurposeCheckpoint, c.Statement()))
		}, want: []wantProblem{{audit.CheckCheckpointSignature, 0, "another key signed it"}, {audit.CheckCheckpointSignature, 0, "does not verify"}}, only: true},
		{name: "checkpoint signed by another key under the right key id", resign: func(t *testing.T, c *audit.Checkpoint) {
			c.Signature = fmt.Sprintf("%x", newTestSigner(t).Sign(audit.PurposeCheckpoint, c.Statement()))
		}, want: []wantProblem{{audit.CheckCheckpointSignature, 0, "does not verify"}}, only: true},
		{name: "checkpoint head changed", resign: func(t *testing.T, c *audit.Checkpoint) { c.Heads[0].Seq-- },
			want: []wantProblem{{audit.CheckCheckpointSignature, 0, "a head was changed"}}},
		// Issue 30 point 2: the facts behind the journal. The fixture's
		// card has a second hold, in EUR: a CARD_AUTH whose facts name its
		// rate version and cross-border fee (facts_fixture_test.go).
		{name: "rate row changed", tamper: `alter table fx_rate_versions disable trigger fx_rate_versions_append_only;
			update fx_rate_versions set mid_rate = mid_rate + 0.01 where version = $RATEV;
			alter table fx_rate_versions enable trigger fx_rate_versions_append_only`,
			// The foreign CARD_AUTH and the transfer both name it.
			want: []wantProblem{{audit.CheckRateVersion, 0, "has mid rate"}, {audit.CheckRateVersion, 0, "has mid rate"}}, only: true},
		{name: "rate row's time changed", tamper: `alter table fx_rate_versions disable trigger fx_rate_versions_append_only;
			update fx_rate_versions set set_at = set_at - interval '1 hour' where version = $RATEV;
			alter table fx_rate_versions enable trigger fx_rate_versions_append_only`,
			want: []wantProblem{{audit.CheckRateVersion, 0, "was set at"}, {audit.CheckRateVersion, 0, "was set at"}}, only: true},
		{name: "converted amount changed with a recomputed hash", tamper: `update postings set amount = amount + 1 where merchant_id = $M and merchant_seq = $FXSEQ;
			update entries set metadata = jsonb_set(metadata, '{fx_amount}', to_jsonb(((metadata->>'fx_amount')::bigint + 1)::text))
			where merchant_id = $M and merchant_seq = $FXSEQ;` + strings.ReplaceAll(rechainSQL, "$FROM", "$FXSEQ"),
			want: []wantProblem{{audit.CheckFXAmount, 0, "the rate gives"}, {audit.CheckHoldAuth, 0, "the authorization approved"}}},
		{name: "fee changed with a recomputed hash", tamper: `update postings set amount = amount - 1 where merchant_id = $M and merchant_seq = $FXSEQ;
			update entries set metadata = jsonb_set(metadata, '{fee_amount}', to_jsonb(((metadata->>'fee_amount')::bigint - 1)::text))
			where merchant_id = $M and merchant_seq = $FXSEQ;` + strings.ReplaceAll(rechainSQL, "$FROM", "$FXSEQ"),
			want: []wantProblem{{audit.CheckFeeAmount, 0, "the rule cross_border v1 gives"}, {audit.CheckHoldAuth, 0, "the authorization approved"}}},
		// A card transfer across currencies: its converted amount, moved
		// and recorded alike, with the hashes recomputed.
		{name: "card transfer's converted amount changed with a recomputed hash", tamper: `update postings set amount = amount + 1
			where merchant_id = $M and merchant_seq = $TRFSEQ and currency = 'USD';
			update entries set metadata = jsonb_set(metadata, '{fx_amount}', to_jsonb(((metadata->>'fx_amount')::bigint + 1)::text))
			where merchant_id = $M and merchant_seq = $TRFSEQ;` + strings.ReplaceAll(rechainSQL, "$FROM", "$TRFSEQ"),
			want: []wantProblem{{audit.CheckFXAmount, 0, "fx_amount 1339, the rate gives 1338"}}},
		{name: "hold naming the wrong authorization", tamper: `update entries set auth_id = '$USDAUTH' where merchant_id = $M and merchant_seq = $FXSEQ;` +
			strings.ReplaceAll(rechainSQL, "$FROM", "$FXSEQ"),
			want: []wantProblem{{audit.CheckHoldAuth, 0, "$USDAUTH is named by 2 CARD_AUTH entries"}, {audit.CheckHoldAuth, 0, "$FXAUTH is named by 0 CARD_AUTH entries"}}},
		{name: "authorization's rate changed", tamper: `update authorizations set fx_rate = '1.2' where auth_id = '$FXAUTH'`,
			want: []wantProblem{{audit.CheckHoldAuth, 0, "are not the authorization's"}}, only: true},
		{name: "truncated journal", tamper: dropJournalForeignKeys + ` truncate bill_lines, postings, entries, bill_blocks, balances`,
			want: []wantProblem{{audit.CheckJournalEmptied, 0, "the heads say"}}, only: true},
		{name: "truncated journal and heads", tamper: dropJournalForeignKeys + ` truncate bill_lines, postings, entries, bill_blocks, balances, ledger_heads`,
			want: []wantProblem{{audit.CheckJournalEmptied, 0, "accounts exist"}}, only: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ff := newFactsFixture(t)
			f := ff.verifyFixture
			signer := newTestSigner(t)
			svc := audit.New(f.l.Ledger)
			cp, err := svc.Checkpoint(ctx, signer)
			if err != nil {
				t.Fatal(err)
			}
			if tc.resign != nil {
				tc.resign(t, cp)
			}
			if tc.tamper != "" {
				f.tamperAll(t, ff.expand(tc.tamper))
			}
			rep, err := svc.Verify(ctx, audit.VerifyOptions{Checkpoint: cp, PublicKey: signer.Public()})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if !rep.OK() {
					t.Fatalf("problems in an untouched copy: %v", rep.Problems)
				}
				checkReportJSON(t, rep)
				return
			}
			for _, w := range tc.want {
				found := false
				for _, p := range rep.Problems {
					seqOK := w.seq == 0 || p.Seq == f.deposits[w.seq-1]
					merchantOK := p.Merchant == f.m.ID || p.Merchant == 0
					found = found || (p.Check == w.check && merchantOK && seqOK && strings.Contains(p.Detail, ff.expand(w.detail)))
				}
				if !found {
					t.Errorf("no %s problem (deposit %d) saying %q in %v", w.check, w.seq, w.detail, rep.Problems)
				}
			}
			if tc.only && len(rep.Problems) != len(tc.want) {
				t.Errorf("%d problems, want only %d: %v", len(rep.Problems), len(tc.want), rep.Problems)
			}
		})
	}
}

// checkReportJSON checks what an auditor records from `verify --json`:
// problems is [] (never null), every head is listed, and the checkpoint.
func checkReportJSON(t *testing.T, rep *audit.Report) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Problems   json.RawMessage        `json:"problems"`
		Heads      []audit.CheckpointHead `json:"heads"`
		Checkpoint *audit.CheckpointRef   `json:"checkpoint"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Problems) != "[]" {
		t.Errorf("problems %s, want []", got.Problems)
	}
	if int64(len(got.Heads)) != rep.Merchants || len(got.Heads) == 0 || got.Heads[0].Seq == 0 || len(got.Heads[0].Hash) != 64 {
		t.Errorf("heads %+v for %d merchants", got.Heads, rep.Merchants)
	}
	if got.Checkpoint == nil || len(got.Checkpoint.Root) != 64 {
		t.Errorf("checkpoint %+v", got.Checkpoint)
	}
}

func newTestSigner(t *testing.T) *audit.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return audit.NewSigner(key)
}

// dropJournalForeignKeys drops every foreign key that points at the journal
// (reconciliation records, deposit references, adjustments, …), as an
// attacker who empties the journal would first.
const dropJournalForeignKeys = `do $$ declare r record; begin for r in select conrelid::regclass::text as t, conname from pg_constraint where contype = 'f' and confrelid in ('entries'::regclass, 'postings'::regclass, 'bill_lines'::regclass) loop execute format('alter table %s drop constraint %I', r.t, r.conname); end loop; end $$;`
