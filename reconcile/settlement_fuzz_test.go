package reconcile_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/paygate/gateway/reconcile"
)

// FuzzSettlementFile feeds the settlement parser and matcher arbitrary
// files against a small ledger in memory. Whatever the bytes: no panic; a
// refusal is a *FileError (UNUSABLE, exit status 2) whose message is UTF-8;
// otherwise every row is counted in exactly one category, the verdict
// agrees with the counts, and the text report is UTF-8 (no byte of the
// file reaches it raw).
func FuzzSettlementFile(f *testing.F) {
	day := time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC)
	src := &fakeSettlements{}
	for i := 0; i < 3; i++ {
		src.entries = append(src.entries, fakeEntry(i, day))
	}
	const header = "message_id,auth_id,amount,currency,date\n"
	for _, seed := range []string{
		"",
		header,
		"# period: 2030-03-01\n" + header + "m0,auth_000000,1.00,USD,2030-03-01\n",
		"\ufeff# PERIOD: 2030-03-01/2030-03-02\r\n" + header + "m1,auth_000001,1.01,USD,2030-03-02\r\n",
		header + "m0,auth_000000,1.00,USD,2030-03-01\nm0,auth_000000,1.00,USD,2030-03-01\n",
		header + "m2,auth_caf\xe9,1.00,USD,2030-03-01\n",
		header + "m\"3,auth_x,1,JPY,2030-02-30\nm4,auth_4,-1,USD,0000-01-01\n",
		"# period: 2030-03-02/2030-03-01\n" + header,
		"#\n",
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, file []byte, withPeriod bool) {
		var period reconcile.Period
		if withPeriod {
			period = reconcile.Period{From: day, To: day}
		}
		rep, err := reconcile.Settlement(t.Context(), src, nil, reconcile.SettlementInput{
			File: bytes.NewReader(file), Name: "fuzz.csv", Period: period, Actor: "fuzz"})
		checkFuzzed(t, err, func() fuzzedReport {
			c := rep.Counts
			return fuzzedReport{rows: rep.Rows, counted: c.Matched + c.AmountDiffers + c.DateDiffers + c.OutsidePeriod + c.AlreadyReconciled + c.TestMerchant +
				c.MissingInLedger + c.DuplicateInFile + c.InvalidRow, toAct: c.ToAct(),
				verdict: rep.Verdict, counts: c, writeText: rep.WriteText}
		})
	})
}
