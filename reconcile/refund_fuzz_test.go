package reconcile_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/reconcile"
)

// fakeRefunds is the network's refunds in memory, for the fuzzer.
type fakeRefunds struct{ entries []reconcile.RefundEntry }

func (s *fakeRefunds) RefundsByMessage(_ context.Context, ids []string) ([]reconcile.RefundEntry, error) {
	return fakeByID(s.entries, ids, func(e *reconcile.RefundEntry) string { return e.MessageID },
		func(id string) reconcile.RefundEntry { return reconcile.RefundEntry{MessageID: id} }), nil
}

func (s *fakeRefunds) RefundsBetween(_ context.Context, from, to time.Time, after reconcile.SettlementCursor,
	limit int) ([]reconcile.RefundEntry, error) {
	return fakePage(s.entries, from, to, after, limit, func(e *reconcile.RefundEntry) (time.Time, int64, bool) {
		return e.CreatedAt, e.EntryID, e.Found && !e.Test
	}), nil
}

// FuzzRefundFile feeds the refund file's parser and matcher arbitrary
// files: no panic; a refusal is a UTF-8 *FileError (exit status 2);
// otherwise every row is in exactly one category, the verdict agrees with
// the counts and the text report is UTF-8.
func FuzzRefundFile(f *testing.F) {
	day := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	src := &fakeRefunds{entries: []reconcile.RefundEntry{
		{MessageID: "net-a", Found: true, EntryID: 1, Merchant: 1, ShopNo: "SH1", Seq: 7, CardNo: "crd_a", Amount: 500, Currency: "USD", CreatedAt: day},
		{MessageID: "net-b", Found: true, EntryID: 2, Merchant: 1, ShopNo: "SH1", Seq: 8, CardNo: "crd_a", Amount: 500, Currency: "USD", CreatedAt: day},
		{MessageID: "sbx-c", Found: true, Test: true, EntryID: 3, Merchant: 2, ShopNo: "SH2", Seq: 3, CardNo: "crd_t", Amount: 100, Currency: "USD", CreatedAt: day},
		{Found: true, EntryID: 4, Merchant: 1, ShopNo: "SH1", Seq: 2, CardNo: "crd_a", Amount: 7125, Currency: "KWD", CreatedAt: day},
	}}
	fuzzFile(f, day, []string{
		"",
		refundHeaderLine,
		"# period: 2030-03-01\n" + refundHeaderLine + "net-a,crd_a,5.00,USD,2030-03-01\nnet-b,crd_a,5.00,USD,2030-03-01\n",
		refundHeaderLine + "net-a,crd_b,5.01,USD,2030-03-01\nnet-a,crd_a,5.00,USD,2030-03-01\nsbx-c,crd_t,1.00,USD,2030-03-01\n",
		refundHeaderLine + "net-z,crd_a,1,JPY,2030-03-01\nnet-b,crd_a,5.00,EUR,2030-02-30\n\"x\n",
		refundHeaderLine + "net-caf\xe9,crd_a,1.00,USD,2030-03-01\n",
		"\ufeff# Period: 2030-03-01/2030-03-02\r\n" + refundHeaderLine + "net-b,crd_a,-5.00,USD,2030-03-02\r\n",
	}, func(t *testing.T, file []byte, period reconcile.Period) (func() fuzzedReport, error) {
		rep, err := reconcile.Refunds(t.Context(), src, nil, reconcile.RefundInput{File: bytes.NewReader(file), Name: "fuzz.csv", Period: period, Actor: "fuzz"})
		return func() fuzzedReport {
			c := rep.Counts
			return fuzzedReport{rows: rep.Rows, counted: c.Matched + c.AmountDiffers + c.CardDiffers + c.DateDiffers + c.OutsidePeriod +
				c.AlreadyReconciled + c.TestMerchant + c.MissingInLedger + c.DuplicateInFile + c.InvalidRow, toAct: c.ToAct(),
				verdict: rep.Verdict, counts: c, writeText: rep.WriteText}
		}, err
	})
}
