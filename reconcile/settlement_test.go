package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paygate/gateway/reconcile"
)

// TestSettlementReconciliation covers every category with real entries,
// made through Authorize and Clear.
func TestSettlementReconciliation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m := f.merchant(t, "USD", "EUR")
	f.deposit(t, m.ID, "USD", 1_000_00)
	card := f.card(t, m.ID, "USD", 500_00).CardNo

	// Day one (2030-03-01).
	matched := f.authorize(t, card, 10_00, "USD").AuthID
	f.clear(t, matched, 10_00)
	partial := f.authorize(t, card, 20_00, "USD").AuthID
	f.clear(t, partial, 18_50)
	otherCurrency := f.authorize(t, card, 5_00, "USD").AuthID
	f.clear(t, otherCurrency, 5_00)
	crossBorder := f.authorize(t, card, 7_00, "EUR").AuthID // a USD card paying in EUR
	f.clear(t, crossBorder, 7_00)
	open := f.authorize(t, card, 3_00, "USD").AuthID
	notInFile := f.authorize(t, card, 4_00, "USD").AuthID
	notInFileMsg := f.clear(t, notInFile, 4_00)
	badRow := f.authorize(t, card, 1_00, "USD").AuthID
	f.clear(t, badRow, 1_00)
	// Day three, outside the file's days: never missing_in_file.
	f.advance(t, 48*time.Hour)
	f.clear(t, f.authorize(t, card, 2_00, "USD").AuthID, 2_00)

	file := strings.Join([]string{
		"# period: 2030-03-01",
		"message_id,auth_id,amount,currency,date",
		"net-1," + matched + ",10.00,USD,2030-03-01",
		"net-2," + partial + ",20.00,USD,2030-03-01",
		"net-3," + otherCurrency + ",5.00,EUR,2030-03-01",
		"net-4," + crossBorder + ",7,EUR,2030-03-02", // cleared on the 1st, dated the 2nd: outside the period
		"net-5," + open + ",3.00,USD,2030-03-01",
		"net-6,auth_doesnotexist000000000,1.00,USD,2030-03-01",
		"net-7," + matched + ",10.00,USD,2030-03-01",
		"net-8," + badRow + ",1.005,USD,2030-03-01",
		"net-9,auth_x,1.00,USD,2030-3-1",
		"net-10,auth_y,1.00,USD,0000-01-01", // parses, but PostgreSQL has no year 0
	}, "\n") + "\n"
	rep, err := f.reconcile(ctx, "day1.csv", file, reconcile.Period{})
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.SettlementCounts{Matched: 1, AmountDiffers: 2, OutsidePeriod: 1, MissingInLedger: 2, MissingInFile: 1,
		DuplicateInFile: 1, InvalidRow: 3}
	if rep.Counts != want || rep.OK() || rep.Rows != 10 || rep.From != "2030-03-01" || rep.To != "2030-03-01" {
		t.Fatalf("report %+v, want counts %+v over 10 rows of the period 2030-03-01", rep, want)
	}
	items := map[string]reconcile.SettlementItem{}
	for _, it := range rep.Items {
		items[fmt.Sprintf("%s %d %s", it.Category, it.Line, it.AuthID)] = it
	}
	for _, tt := range []struct {
		key, detail string
	}{
		{"amount_differs 4 " + partial, "amount differs: the file has 20.00 USD, the ledger 18.50 USD (file − ledger = 1.50 USD)"},
		{"amount_differs 5 " + otherCurrency, "currency differs: the file has 5.00 EUR, the ledger 5.00 USD"},
		{"outside_period 6 " + crossBorder, "dated 2030-03-02, outside the file's period 2030-03-01: not matched"},
		{"missing_in_ledger 7 " + open, "the authorization is open: the ledger has no clearing for it yet"},
		{"missing_in_ledger 8 auth_doesnotexist000000000", "no such authorization in the ledger"},
		{"duplicate_in_file 9 " + matched, "authorization already on line 3; this row is not matched"},
		{"invalid_row 10 " + badRow, `amount "1.005": `},
		{"invalid_row 11 auth_x", `date "2030-3-1": must be a date YYYY-MM-DD`},
		{"invalid_row 12 auth_y", `date "0000-01-01": must be a day from 1970-01-01 to 9999-12-31`},
		{"missing_in_file 0 " + notInFile, "cleared in the ledger on 2030-03-01; the file has no row for it"},
	} {
		it, ok := items[tt.key]
		if !ok {
			t.Errorf("no item %q in %+v", tt.key, rep.Items)
			continue
		}
		if !strings.Contains(it.Detail, tt.detail) {
			t.Errorf("%s: detail %q, want %q", tt.key, it.Detail, tt.detail)
		}
	}
	if it := items["missing_in_file 0 "+notInFile]; it.ShopNo != m.ShopNo || it.Seq == 0 || it.LedgerMessageID != notInFileMsg ||
		it.LedgerAmount == nil || it.LedgerAmount.String() != "4.00 USD" || it.CardNo != card {
		t.Errorf("missing_in_file does not name the entry: %+v", it)
	}
	if it := items["amount_differs 4 "+partial]; it.ShopNo != m.ShopNo || it.Seq == 0 || it.LedgerAmount.String() != "18.50 USD" {
		t.Errorf("amount_differs does not name the entry: %+v", it)
	}
	// File against ledger per currency: the ledger's side is every
	// clearing of the 1st, in the network's amounts (the day-three one
	// is not in it).
	wantTotals := []reconcile.SettlementTotal{
		{Currency: "EUR", FileRows: 2, FileAmount: "12.00", LedgerRows: 1, LedgerAmount: "7.00", Difference: "5.00", MatchedRows: 0, MatchedAmount: "0.00"},
		{Currency: "USD", FileRows: 4, FileAmount: "34.00", LedgerRows: 5, LedgerAmount: "38.50", Difference: "-4.50", MatchedRows: 1, MatchedAmount: "10.00"},
	}
	if fmt.Sprint(rep.Totals) != fmt.Sprint(wantTotals) {
		t.Errorf("totals\n%+v, want\n%+v", rep.Totals, wantTotals)
	}
	if rep.Verdict != (reconcile.Verdict{Status: 1, Word: "DISCREPANCIES", Text: "10 of 11 rows and ledger items need attention"}) ||
		rep.Recorded != nil {
		t.Errorf("verdict %+v, recorded %+v", rep.Verdict, rep.Recorded)
	}

	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	// It starts with the totals and ends with the verdict.
	if !strings.HasPrefix(lines[0], "Settlement file day1.csv (sha256 "+rep.File.SHA256+"): 10 rows; period 2030-03-01 (UTC)") ||
		!strings.HasPrefix(lines[2], "CURRENCY") || !strings.Contains(lines[3], "EUR") || !strings.Contains(lines[4], "-4.50") ||
		lines[len(lines)-1] != "DISCREPANCIES: 10 of 11 rows and ledger items need attention (exit status 1)" ||
		lines[len(lines)-2] != "Not recorded: a file with discrepancies is not accepted; reconcile the corrected file" {
		t.Errorf("the text report's shape:\n%s", text)
	}
	for _, want := range []string{"amount_differs", "outside_period", "missing_in_ledger", "missing_in_file", "duplicate_in_file",
		"invalid_row", partial, m.ShopNo} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report lacks %q:\n%s", want, text)
		}
	}
	t.Logf("the report:\n%s", text)
	js, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(js), `"amount_differs":2`) || !strings.Contains(string(js), `"fileAmount":20.00`) ||
		!strings.Contains(string(js), `"exitStatus":1`) {
		t.Errorf("JSON %s, %v", js, err)
	}

	// The rows that match, alone: everything matched, and recorded.
	clean := "# period: 2030-03-01\nmessage_id,auth_id,amount,currency,date\nnet-1," + matched + ",10.00,USD,2030-03-01\nnet-4," + crossBorder + ",7.00,EUR,2030-03-01\n" +
		"net-x," + partial + ",18.50,USD,2030-03-01\nnet-y," + otherCurrency + ",5.00,USD,2030-03-01\n" +
		"net-z," + notInFile + ",4.00,USD,2030-03-01\nnet-w," + badRow + ",1.00,USD,2030-03-01\n"
	rep, err = f.reconcile(ctx, "day1-fixed.csv", clean, reconcile.Period{})
	if err != nil || !rep.OK() || rep.Counts.Matched != 6 || rep.Verdict.Status != reconcile.ExitMatched ||
		rep.Recorded == nil || rep.Recorded.Items != 6 || rep.AlreadyRecorded {
		t.Fatalf("a matching file: %v, %+v", err, rep)
	}
}

// reconcile runs a file through the fixture's ledger and records, as
// the CLI does.
func (f *fixture) reconcile(ctx context.Context, name, file string, period reconcile.Period) (*reconcile.SettlementReport, error) {
	return reconcile.Settlement(ctx, f.l.Settlements(), reconcile.NewRecords(f.db.DB), reconcile.SettlementInput{
		File: strings.NewReader(file), Name: name, Period: period, Actor: "cli:test"})
}

// fakeReconcile runs a file against a ledger in memory, recording nothing.
func fakeReconcile(src reconcile.SettlementSource, file string, period reconcile.Period) (*reconcile.SettlementReport, error) {
	return reconcile.Settlement(context.Background(), src, nil, reconcile.SettlementInput{
		File: strings.NewReader(file), Name: "fake.csv", Period: period, Actor: "test"})
}

// march1 is the fixture's first day as a period.
var march1 = reconcile.Period{From: time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC)}

// fakeSettlements is a ledger in memory, to test the file handling,
// batches and pages without a database.
type fakeSettlements struct {
	entries      []reconcile.LedgerSettlement // by CreatedAt, then EntryID
	byAuthCalls  int
	betweenCalls int
	batchMax     int
}

func (s *fakeSettlements) SettlementsByAuth(_ context.Context, ids []string) ([]reconcile.LedgerSettlement, error) {
	s.byAuthCalls++
	s.batchMax = max(s.batchMax, len(ids))
	return fakeByID(s.entries, ids, func(e *reconcile.LedgerSettlement) string { return e.AuthID },
		func(id string) reconcile.LedgerSettlement { return reconcile.LedgerSettlement{AuthID: id} }), nil
}

func (s *fakeSettlements) SettlementsBetween(_ context.Context, from, to time.Time, after reconcile.SettlementCursor, limit int) ([]reconcile.LedgerSettlement, error) {
	s.betweenCalls++
	var out []reconcile.LedgerSettlement
	for _, e := range s.entries {
		later := e.CreatedAt.After(after.CreatedAt) || (e.CreatedAt.Equal(after.CreatedAt) && e.EntryID > after.EntryID)
		if !e.CreatedAt.Before(from) && e.CreatedAt.Before(to) && later && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func fakeEntry(i int, day time.Time) reconcile.LedgerSettlement {
	return reconcile.LedgerSettlement{AuthID: fmt.Sprintf("auth_%06d", i), AuthStatus: reconcile.AuthCleared, Found: true,
		EntryID: int64(i + 1), Merchant: 1, ShopNo: "SH1", Seq: int64(i + 1), CardNo: "crd_1",
		CreatedAt: day.Add(time.Duration(i%7) * time.Second), // several entries share a time: the cursor needs the id
		MessageID: fmt.Sprintf("clr-%d", i), TxnAmount: fmt.Sprint(100 + i), TxnCurrency: "USD", Captured: int64(100 + i), Currency: "USD"}
}

func TestSettlementBatchesAndPages(t *testing.T) {
	t.Parallel()
	day := time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC)
	src := &fakeSettlements{}
	for i := 0; i < 2600; i++ {
		src.entries = append(src.entries, fakeEntry(i, day))
	}
	sort.Slice(src.entries, func(a, b int) bool {
		ea, eb := src.entries[a], src.entries[b]
		return ea.CreatedAt.Before(eb.CreatedAt) || (ea.CreatedAt.Equal(eb.CreatedAt) && ea.EntryID < eb.EntryID)
	})
	// The file has the first 2,500 entries, in a spreadsheet's dress: a
	// byte order mark, CRLF, quotes, spaces and an upper-case header.
	var file strings.Builder
	file.WriteString("\ufeffMESSAGE_ID, auth_id ,amount,currency,date\r\n")
	for i := 0; i < 2500; i++ {
		fmt.Fprintf(&file, "\"net-%d\", auth_%06d ,\"%d.%02d\",USD,2030-03-01\r\n", i, i, (100+i)/100, (100+i)%100)
	}
	rep, err := fakeReconcile(src, file.String(), reconcile.Period{From: day, To: day})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Matched != 2500 || rep.Counts.MissingInFile != 100 || rep.Rows != 2500 || len(rep.Items) != 100 {
		t.Fatalf("counts %+v over %d rows, %d items", rep.Counts, rep.Rows, len(rep.Items))
	}
	if src.byAuthCalls != 3 || src.batchMax != reconcile.SettlementBatch || src.betweenCalls != 3 {
		t.Errorf("%d batches of at most %d, %d pages: want 3 of %d and 3 pages", src.byAuthCalls, src.batchMax,
			src.betweenCalls, reconcile.SettlementBatch)
	}
	missing := map[string]bool{}
	for _, it := range rep.Items {
		missing[it.AuthID] = true
	}
	for i := 2500; i < 2600; i++ {
		if !missing[fmt.Sprintf("auth_%06d", i)] {
			t.Errorf("auth_%06d is not reported missing in the file", i)
		}
	}
}

func TestSettlementFileErrors(t *testing.T) {
	t.Parallel()
	src := &fakeSettlements{}
	header := "message_id,auth_id,amount,currency,date\n"
	for _, tt := range []struct {
		name, file, want string
	}{
		{"empty", "", "settlement file: the file is empty"},
		{"wrong header", "id,auth,amount,currency,date\n", "line 1: the header must be message_id,auth_id,amount,currency,date"},
		{"header only short", "message_id,auth_id\n", "line 1: the header must be"},
		{"long line", header + "m,a,1.00,USD,2030-03-01\n" + strings.Repeat("x", 5000) + "\n", "line 3: longer than 4096 bytes"},
		{"no newline at all", strings.Repeat("y", 100_000), "line 1: longer than 4096 bytes"},
		// A Latin-1 export: refused with its line, the byte named by its
		// value and never copied into the message.
		{"latin-1 row", header + "m1,auth_1,1.00,USD,2030-03-01\nm2,auth_caf\xe9,1.00,USD,2030-03-01\nm3,auth_3,1.00,USD,2030-03-01\n",
			"line 3: byte 12 (0xE9) is not UTF-8"},
		{"latin-1 last line, no newline", header + "m1,auth_1,1.00,USD,2030-03-01\nm2,auth_2,1.00,USD,2030-03-01 \xa0", "line 3: byte 31 (0xA0)"},
		{"latin-1 header", "message_id,auth_id,amount,currency,dat\xe9\n", "line 1: byte 39 (0xE9)"},
		{"latin-1 period line", "# period: 2030-03-01 \xe9\n" + header, "line 1: byte 22 (0xE9)"},
		{"bad period line", "# periode: 2030-03-01\n" + header, "line 1: a first line starting with # must be # period: YYYY-MM-DD[/YYYY-MM-DD]"},
		{"bad period day", "# period: 2030-02-30\n" + header, "line 1: the period: must be a date YYYY-MM-DD"},
		{"period backwards", "# period: 2030-03-02/2030-03-01\n" + header, "line 1: the period: the period ends before it starts"},
		{"period another day", "# period: 2030-03-02\n" + header, "line 1: the file's period is 2030-03-02, the period given is 2030-03-01"},
		{"period over a year", "# period: 2030-01-01/2031-01-02\n" + header, "a period covers at most 366 days"},
	} {
		_, err := fakeReconcile(src, tt.file, march1)
		if tt.name == "period another day" || tt.name == "period over a year" || strings.HasPrefix(tt.name, "bad period") {
			_, err = fakeReconcile(src, tt.file, map[bool]reconcile.Period{true: march1}[tt.name == "period another day"])
		}
		var fe *reconcile.FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a FileError saying %q", tt.name, err, tt.want)
		}
		if err != nil && (!utf8.ValidString(err.Error()) || reconcile.UnusableVerdict(err).Status != reconcile.ExitUnusable) {
			t.Errorf("%s: %q is not valid UTF-8 or not UNUSABLE", tt.name, err)
		}
	}
	// Without a period line or a period given, a file cannot be reconciled.
	if _, err := fakeReconcile(src, header+"m1,auth_1,1.00,USD,2030-03-01\n", reconcile.Period{}); !reconcile.IsUnusable(err) ||
		!strings.Contains(err.Error(), "the file states no settlement period") {
		t.Errorf("no period: %v", err)
	}
	// Rows that cannot be read are reported, each once, and the rest goes on.
	rep, err := fakeReconcile(src, header+
		"m1,auth_1,1.00,USD\n"+ // four fields
		"m2,auth_2,1.00,usd,2030-03-01\n"+
		"m3,auth_3,-1.00,USD,2030-03-01\n"+
		"m4,auth_4,0.1e1,USD,2030-02-30\n"+
		"m 5,auth_5,1,USD,2030-03-01\n"+
		"m6,auth_6,1.5,JPY,2030-03-01\n"+
		"m7,\"auth\"_7\",1,USD,2030-03-01\n"+
		"m8,auth_8,2,USD,2030-03-01\n", march1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.InvalidRow != 7 || rep.Counts.MissingInLedger != 1 || rep.Rows != 8 {
		t.Fatalf("counts %+v over %d rows: %+v", rep.Counts, rep.Rows, rep.Items)
	}
	var invalid []reconcile.SettlementItem
	for _, it := range rep.Items {
		if it.Category == reconcile.CategoryInvalidRow {
			invalid = append(invalid, it)
		}
	}
	for i, want := range []string{"4 fields, want 5", `currency "usd": `, "amount \"-1.00\": must be positive", "date \"2030-02-30\"",
		"message_id: must be", "amount \"1.5\": ", "not valid CSV"} {
		if it := invalid[i]; it.Line != int64(i+2) || !strings.Contains(it.Detail, want) {
			t.Errorf("item %d: line %d %q, want line %d saying %q", i, it.Line, it.Detail, i+2, want)
		}
	}
}

// TestSettlementRowLimit lowers the package's row limit: it does not run in
// parallel.
func TestSettlementRowLimit(t *testing.T) {
	defer reconcile.SetSettlementRowsMax(3)()
	file := "message_id,auth_id,amount,currency,date\n" + strings.Repeat("m,a,1.00,USD,2030-03-01\n", 4)
	_, err := fakeReconcile(&fakeSettlements{}, file, march1)
	if err == nil || err.Error() != "settlement file, line 5: more than 3 rows: split the file" {
		t.Fatalf("a file over the row limit: %v", err)
	}
}
