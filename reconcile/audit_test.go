package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/reconcile"
)

func TestAuditNamesTamperedEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m := f.merchant(t, "USD")
	other := f.merchant(t, "USD")
	for _, minor := range []int64{100_00, 250_00, 75_00} {
		f.deposit(t, m.ID, "USD", minor)
		f.deposit(t, other.ID, "USD", minor)
	}
	c := f.card(t, m.ID, "USD", 50_00)
	f.clear(t, f.authorize(t, c.CardNo, 20_00, "USD").AuthID, 20_00)

	var out, progress bytes.Buffer
	ok, err := reconcile.Audit(ctx, audit.New(f.l.Ledger), reconcile.AuditOptions{Out: &out, Progress: &progress})
	if err != nil || !ok || !strings.HasPrefix(out.String(), "OK: 2 merchants, 9 entries") {
		t.Fatalf("Audit before tampering = %v, %v:\n%s", ok, err, out.String())
	}
	if progress.Len() != 0 {
		t.Errorf("a progress bar was drawn on a buffer, not a terminal: %q", progress.String())
	}

	// The second deposit's amount, changed behind the triggers' back.
	f.tamper(t, `update postings set amount = amount + 1 where merchant_id = ? and merchant_seq = 2`, m.ID)

	out.Reset()
	ok, err = reconcile.Audit(ctx, audit.New(f.l.Ledger), reconcile.AuditOptions{Out: &out, Progress: &progress})
	if err != nil || ok {
		t.Fatalf("Audit after tampering = %v, %v, want a failure", ok, err)
	}
	text := out.String()
	for _, want := range []string{
		fmt.Sprintf("BREAK hash_chain merchant=%d seq=2: stored hash", m.ID),
		fmt.Sprintf("BREAK balance merchant=%d account=m:%d:funding:USD", m.ID, m.ID),
		"FAILED: 2 merchants, 9 entries",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, fmt.Sprintf("merchant=%d ", other.ID)) {
		t.Errorf("the report blames the untouched merchant:\n%s", text)
	}

	// The same, as JSON, for one merchant.
	out.Reset()
	ok, err = reconcile.Audit(ctx, audit.New(f.l.Ledger), reconcile.AuditOptions{Merchant: m.ID, JSON: true, Out: &out})
	if err != nil || ok {
		t.Fatalf("Audit --json = %v, %v", ok, err)
	}
	var rep audit.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	found := false
	for _, p := range rep.Problems {
		found = found || (p.Check == audit.CheckHashChain && p.Merchant == m.ID && p.Seq == 2)
	}
	if !found || rep.Merchants != 1 {
		t.Errorf("the JSON report does not name merchant %d entry 2: %+v", m.ID, rep)
	}

	// The other merchant alone still verifies.
	out.Reset()
	if ok, err := reconcile.Audit(ctx, audit.New(f.l.Ledger), reconcile.AuditOptions{Merchant: other.ID, Out: &out}); err != nil || !ok {
		t.Errorf("Audit of the untouched merchant = %v, %v:\n%s", ok, err, out.String())
	}
}
