package reconcile_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/reconcile"
)

// fakeRail is the remittances' ends in memory, for the fuzzer.
type fakeRail struct{ entries []reconcile.RailEntry }

func (s *fakeRail) RailEntriesByTx(_ context.Context, ids []string) ([]reconcile.RailEntry, error) {
	return fakeByID(s.entries, ids, func(e *reconcile.RailEntry) string { return e.TxID },
		func(id string) reconcile.RailEntry { return reconcile.RailEntry{TxID: id} }), nil
}

func (s *fakeRail) RailEntriesBetween(_ context.Context, from, to time.Time, after reconcile.SettlementCursor,
	limit int) ([]reconcile.RailEntry, error) {
	return fakePage(s.entries, from, to, after, limit, func(e *reconcile.RailEntry) (time.Time, int64, bool) {
		return e.CreatedAt, e.EntryID, e.Found
	}), nil
}

// FuzzRailReport feeds the rail report's parser and matcher arbitrary
// files: no panic; a refusal is a UTF-8 *FileError (exit status 2);
// otherwise every row is in exactly one category, the verdict agrees with
// the counts and the text report is UTF-8.
func FuzzRailReport(f *testing.F) {
	day := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	src := &fakeRail{entries: []reconcile.RailEntry{
		{TxID: "rmt_a", Found: true, Status: "SETTLED", EntryID: 1, Seq: 1, Kind: "REMIT_SETTLE", Amount: 10000, Fee: 150, Currency: "USD", CreatedAt: day},
		{TxID: "rmt_b", Found: true, Status: "RETURNED", EntryID: 2, Seq: 2, Kind: "REMIT_RETURN", Amount: 7125, Fee: 250, Currency: "KWD", CreatedAt: day},
		{TxID: "rmt_c", Status: "IN_FLIGHT"},
	}}
	fuzzFile(f, day, []string{
		"",
		railHeaderLine,
		"# period: 2030-03-01\n" + railHeaderLine + "rmt_a,SETTLED,100.00,1.50,USD,2030-03-01\nrmt_b,RETURNED,7.125,0.250,KWD,2030-03-01\n",
		railHeaderLine + "rmt_a,RETURNED,100.00,1.5,USD,2030-03-01\nrmt_a,SETTLED,100.00,1.50,USD,2030-03-01\n",
		railHeaderLine + "rmt_c,SETTLED,1,0,JPY,2030-03-01\nrmt_d,PAID,1,0,USD,2030-02-30\n\"x\n",
		railHeaderLine + "rmt_caf\xe9,SETTLED,1.00,0,USD,2030-03-01\n",
		"\ufeff# Period: 2030-03-01/2030-03-02\r\n" + railHeaderLine + "rmt_b,RETURNED,7.125,-1,KWD,2030-03-02\r\n",
	}, func(t *testing.T, file []byte, period reconcile.Period) (func() fuzzedReport, error) {
		rep, err := reconcile.Rail(t.Context(), src, nil, reconcile.RailInput{File: bytes.NewReader(file), Name: "fuzz.csv", Period: period, Actor: "fuzz"})
		return func() fuzzedReport {
			c := rep.Counts
			return fuzzedReport{rows: rep.Rows, counted: c.Matched + c.StatusDiffers + c.AmountDiffers + c.FeeDiffers + c.DateDiffers + c.OutsidePeriod +
				c.AlreadyReconciled + c.MissingInLedger + c.DuplicateInFile + c.InvalidRow, toAct: c.ToAct(),
				verdict: rep.Verdict, counts: c, writeText: rep.WriteText}
		}, err
	})
}
