package ledger_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// TestVerifyNamesAnEntryChangedInAnyColumn changes one column of one
// journal entry, or of one of its postings, in the database, behind the
// append-only triggers' back, and expects Verify to name that entry (its
// merchant and sequence; where the change moves the entry, its new place).
// Every column of entries and postings is listed: TestHashCoverageListsEveryColumn
// fails when a column is added without a case here.
//
// The entry has every reference (card, transaction — a remittance's or a
// transfer's id —, authorization), metadata and two postings, and sits in
// the middle of its merchant's journal.
func TestVerifyNamesAnEntryChangedInAnyColumn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		table, column, name string
		tamper              string // $M the merchant, $S the entry, $O the other merchant
		moved               string // where the entry is afterwards, when it moves: "$O/1000", "$M/1000"
	}{
		{"entries", "merchant_id", "moved to another merchant", `
			with p as (update postings set merchant_id = $O, merchant_seq = 1000 where merchant_id = $M and merchant_seq = $S),
			     b as (update bill_lines set merchant_id = $O, merchant_seq = 1000 where merchant_id = $M and merchant_seq = $S)
			update entries set merchant_id = $O, merchant_seq = 1000 where merchant_id = $M and merchant_seq = $S`, "$O/1000"},
		{"entries", "merchant_seq", "renumbered", `
			with p as (update postings set merchant_seq = 1000 where merchant_id = $M and merchant_seq = $S),
			     b as (update bill_lines set merchant_seq = 1000 where merchant_id = $M and merchant_seq = $S)
			update entries set merchant_seq = 1000 where merchant_id = $M and merchant_seq = $S`, "$M/1000"},
		{"entries", "id", "stored later", `update entries set id = default where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "kind", "", `update entries set kind = 'FEE' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "created_at", "", `update entries set created_at = created_at + interval '1 microsecond' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "card_no", "changed", `update entries set card_no = 'crd_other' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "card_no", "removed", `update entries set card_no = null where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "card_no", "empty, not null", `update entries set card_no = '' where merchant_id = $M and merchant_seq = $S - 1`, "$M/$S-1"},
		{"entries", "card_no", "added", `update entries set card_no = 'crd_added' where merchant_id = $M and merchant_seq = $S - 1`, "$M/$S-1"},
		{"entries", "tx_id", "changed", `update entries set tx_id = 'rmt_other' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "tx_id", "removed", `update entries set tx_id = null where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "tx_id", "empty, not null", `update entries set tx_id = '' where merchant_id = $M and merchant_seq = $S - 1`, "$M/$S-1"},
		{"entries", "auth_id", "changed", `update entries set auth_id = 'auth_other' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "auth_id", "removed", `update entries set auth_id = null where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "auth_id", "empty, not null", `update entries set auth_id = '' where merchant_id = $M and merchant_seq = $S - 1`, "$M/$S-1"},
		{"entries", "metadata", "value", `update entries set metadata = jsonb_set(metadata, '{fx_rate}', '"1.2"') where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "metadata", "key added", `update entries set metadata = metadata || '{"x": "y"}' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "metadata", "emptied", `update entries set metadata = '{}' where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "prev_hash", "", `update entries set prev_hash = sha256(prev_hash) where merchant_id = $M and merchant_seq = $S`, ""},
		{"entries", "hash", "", `update entries set hash = sha256(hash) where merchant_id = $M and merchant_seq = $S`, ""},
		{"postings", "merchant_id", "", `update postings set merchant_id = $O, merchant_seq = 1 , idx = 9 where merchant_id = $M and merchant_seq = $S and idx = 1`, ""},
		{"postings", "merchant_seq", "", `update postings set merchant_seq = $S - 1, idx = 9 where merchant_id = $M and merchant_seq = $S and idx = 1`, ""},
		{"postings", "idx", "reordered", `update postings set idx = 15 where merchant_id = $M and merchant_seq = $S and idx = 0;
			update postings set idx = 0 where merchant_id = $M and merchant_seq = $S and idx = 1;
			update postings set idx = 1 where merchant_id = $M and merchant_seq = $S and idx = 15`, ""},
		{"postings", "idx", "renumbered in order", `update postings set idx = 9 where merchant_id = $M and merchant_seq = $S and idx = 1`, ""},
		{"postings", "source_id", "", `update postings set source_id = destination_id, destination_id = source_id where merchant_id = $M and merchant_seq = $S and idx = 0`, ""},
		{"postings", "destination_id", "", `update postings set destination_id = (select id from accounts where merchant_id = $M and type = 'world' and currency = 'USD')
			where merchant_id = $M and merchant_seq = $S and idx = 0`, ""},
		{"postings", "amount", "", `update postings set amount = amount + 1 where merchant_id = $M and merchant_seq = $S and idx = 1`, ""},
		{"postings", "currency", "", `update postings set currency = 'USD' where merchant_id = $M and merchant_seq = $S and idx = 1`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.table+"."+tc.column+" "+tc.name, func(t *testing.T) {
			t.Parallel()
			l, m, other, seq := newHashCoverageFixture(t)
			r := strings.NewReplacer("$M", fmt.Sprint(m), "$O", fmt.Sprint(other), "$S", fmt.Sprint(seq))
			tamperJournal(t, l, r.Replace(tc.tamper))
			wantM, wantS := m, seq
			if tc.moved != "" {
				if _, err := fmt.Sscanf(strings.ReplaceAll(r.Replace(tc.moved), "-1", ""), "%d/%d", &wantM, &wantS); err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(tc.moved, "-1") {
					wantS--
				}
			}
			rep, err := audit.New(l).Verify(context.Background(), audit.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rep.Problems {
				if p.Merchant == wantM && p.Seq == wantS {
					return
				}
			}
			t.Errorf("no problem names entry %d/%d: %v", wantM, wantS, rep.Problems)
		})
	}
}

// newHashCoverageFixture is a merchant whose journal is a deposit in each
// currency, the entry under test (its sequence is returned: every
// reference, metadata, two postings in two currencies through the FX
// position), and a deposit
// after it; and another merchant with one deposit.
func newHashCoverageFixture(t *testing.T) (l *ledger.Ledger, m, other, seq int64) {
	t.Helper()
	ctx := context.Background()
	l = newLedger(t, ledger.Config{})
	mm := newMerchant(t, l, "USD", "EUR")
	o := newMerchant(t, l, "USD")
	deposit(t, l, mm.ID, "USD", 100_00)
	deposit(t, l, mm.ID, "EUR", 100_00)
	deposit(t, l, o.ID, "USD", 1_00)
	res, err := l.Append(ctx, ledger.Batch{Merchant: mm.ID, Entries: []postings.Entry{{
		Merchant: mm.ID, Kind: postings.KindAdjustment,
		Postings: []postings.Posting{
			{Source: fund(mm.ID, "USD"), Destination: postings.MerchantAccount(mm.ID, postings.AccountFXPosition, "USD"), Amount: 1_00, Currency: "USD"},
			{Source: postings.MerchantAccount(mm.ID, postings.AccountFXPosition, "EUR"), Destination: fund(mm.ID, "EUR"), Amount: 2_00, Currency: "EUR"},
		},
		Refs:     postings.Refs{CardNo: "crd_coverage", TxID: "rmt_coverage", AuthID: "auth_coverage"},
		Metadata: map[string]string{"fx_rate": "1.1", "note": "coverage"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	deposit(t, l, mm.ID, "USD", 1_00)
	mustVerify(t, l)
	return l, mm.ID, o.ID, res.Records[0].Seq
}

// tamperJournal runs stmt with the journal's append-only triggers off, as
// a superuser could.
func tamperJournal(t *testing.T, l *ledger.Ledger, stmt string) {
	t.Helper()
	var b strings.Builder
	tables := []string{"entries", "postings", "bill_lines"}
	for _, tb := range tables {
		fmt.Fprintf(&b, "alter table %s disable trigger %s_append_only;\n", tb, tb)
	}
	b.WriteString(stmt + ";\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "alter table %s enable trigger %s_append_only;\n", tb, tb)
	}
	if _, err := l.DB().DB.ExecContext(context.Background(), b.String()); err != nil {
		t.Fatalf("tampering: %v\n%s", err, stmt)
	}
}

// TestHashCoverageListsEveryColumn: the cases above name every column of
// entries and postings, so that a column added later is tampered with too.
func TestHashCoverageListsEveryColumn(t *testing.T) {
	t.Parallel()
	l := newLedger(t, ledger.Config{})
	srcBytes, err := os.ReadFile("hash_coverage_test.go")
	src := string(srcBytes)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := l.DB().DB.QueryContext(context.Background(), `
		select table_name, column_name from information_schema.columns
		where table_schema = current_schema() and table_name in ('entries', 'postings') order by 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var tb, col string
		if err := rows.Scan(&tb, &col); err != nil {
			t.Fatal(err)
		}
		n++
		if !strings.Contains(src, fmt.Sprintf("{%q, %q,", tb, col)) {
			t.Errorf("no case tampers with %s.%s", tb, col)
		}
	}
	if err := rows.Err(); err != nil || n < 18 {
		t.Fatalf("%d columns: %v", n, err)
	}
}
