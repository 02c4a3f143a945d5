package reconcile_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/paygate/gateway/reconcile"
)

// fakeDeposits is a merchant's deposits in memory, for the fuzzer.
type fakeDeposits struct{ deposits []reconcile.LedgerDeposit }

func (s *fakeDeposits) DepositsByReference(_ context.Context, _ int64, refs []string) ([]reconcile.LedgerDeposit, error) {
	var out []reconcile.LedgerDeposit
	for _, d := range s.deposits {
		if slices.Contains(refs, d.Reference) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (s *fakeDeposits) DepositsBetween(_ context.Context, _ int64, from, to time.Time, after reconcile.SettlementCursor,
	limit int) ([]reconcile.LedgerDeposit, error) {
	var out []reconcile.LedgerDeposit
	for _, d := range s.deposits {
		if !d.CreatedAt.Before(from) && d.CreatedAt.Before(to) && len(out) < limit &&
			(d.CreatedAt.After(after.CreatedAt) || (d.CreatedAt.Equal(after.CreatedAt) && d.EntryID > after.EntryID)) {
			out = append(out, d)
		}
	}
	return out, nil
}

// FuzzBankStatement feeds the bank statement parser and matcher arbitrary
// files against deposits in memory. Whatever the bytes: no panic; a refusal
// is a *FileError (exit status 2) whose message is UTF-8; otherwise every
// line is counted in exactly one category, the verdict agrees with the
// counts, and the text report is UTF-8 (no byte of the file reaches it raw).
func FuzzBankStatement(f *testing.F) {
	day := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	src := &fakeDeposits{}
	for i, d := range []struct {
		cur   string
		minor int64
	}{{"USD", 10000}, {"JPY", 1500}, {"KWD", 7125}, {"USD", 1}} {
		src.deposits = append(src.deposits, reconcile.LedgerDeposit{EntryID: int64(i + 1), Seq: int64(i + 1),
			Reference: fmt.Sprintf("REF-%d", i), Amount: d.minor, Currency: d.cur, CreatedAt: day.Add(time.Duration(i) * time.Hour)})
	}
	src.deposits = append(src.deposits, reconcile.LedgerDeposit{EntryID: 9, Seq: 9, Amount: 5, Currency: "USD", CreatedAt: day})
	fuzzFile(f, day, []string{
		"",
		bankHeader,
		"# period: 2030-03-01\n" + bankHeader + "2030-03-01,100.00,USD,REF-0\n2030-03-01,1500,JPY,REF-1\n",
		"\ufeff# PERIOD: 2030-03-01/2030-03-02\r\n" + bankHeader + "2030-03-02,7.125,KWD,REF-2\r\n",
		bankHeader + "2030-03-01,100.00,EUR,REF-0\n2030-03-01,100.00,USD,REF-0\n2030-03-01,100.00,USD,REF-0\n",
		bankHeader + "2030-03-01,1.00,USD,caf\xe9\n",
		bankHeader + "2030-02-30,1,JPY,REF-1\n0000-01-01,-1,USD,REF-3\n\"x,y\n",
		bankHeader + "2030-03-01,1e2,USD,REF-0\n2030-03-01,0.001,USD,REF-3\n",
		"# period: 2030-03-02/2030-03-01\n" + bankHeader,
		"#\n",
	}, func(t *testing.T, file []byte, period reconcile.Period) (func() fuzzedReport, error) {
		rep, err := reconcile.Bank(t.Context(), src, nil, reconcile.BankInput{
			File: bytes.NewReader(file), Name: "fuzz.csv", Merchant: 1, ShopNo: "SH1", Period: period, Actor: "fuzz"})
		return func() fuzzedReport {
			c := rep.Counts
			return fuzzedReport{rows: rep.Rows, counted: c.Matched + c.AmountDiffers + c.CurrencyDiffers + c.DateDiffers + c.OutsidePeriod +
				c.AlreadyReconciled + c.MissingInLedger + c.DuplicateInFile + c.InvalidRow, toAct: c.ToAct(),
				verdict: rep.Verdict, counts: c, writeText: rep.WriteText}
		}, err
	})
}
