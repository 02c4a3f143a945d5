package bill

import (
	"bytes"
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/paygate/gateway/postings"
)

// The balance report as CSV (docs/finance.md, "Exports finance can load"):
// one encoder for the API, the console and the CLI, so that the three files
// are byte for byte the same document. The report file has one row per
// currency and account class and nothing else: no trailer, so a loader
// that reads every row as data (COPY, a spreadsheet's import, pandas) loads
// it as is. Its totals are a second file with the same columns less the
// class, one row per currency, and the number of report rows it sums, so a
// loader checks the load against it.

// ReportCSVHeader is the report file's first line.
func ReportCSVHeader() []string {
	return reportHeader("currency", "accountClass")
}

// ReportTotalsCSVHeader is the totals file's first line.
func ReportTotalsCSVHeader() []string {
	return reportHeader("currency", "rows")
}

func reportHeader(first ...string) []string {
	h := append(first, "periodStart", "periodEnd", "timeZone", "opening")
	for _, c := range Categories() {
		h = append(h, string(c))
	}
	return append(h, "closing", "movements")
}

// WriteReportCSV writes the report file: the header, then a row per
// currency and class.
func WriteReportCSV(w io.Writer, rep *BalanceReport) error {
	return writeReportCSV(w, ReportCSVHeader(), rep.Rows, rep, func(r ReportRow) string { return string(r.Class) })
}

// WriteReportTotalsCSV writes the totals file: the header, then a row per
// currency summing its report rows, with their count.
func WriteReportTotalsCSV(w io.Writer, rep *BalanceReport) error {
	rows := map[string]int{}
	for _, r := range rep.Rows {
		rows[r.Currency]++
	}
	return writeReportCSV(w, ReportTotalsCSVHeader(), rep.Totals(), rep, func(r ReportRow) string { return strconv.Itoa(rows[r.Currency]) })
}

func writeReportCSV(w io.Writer, header []string, rows []ReportRow, rep *BalanceReport, second func(ReportRow) string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	start, end, zone := PeriodTimes(rep)
	for _, r := range rows {
		cur, err := postings.LookupCurrency(r.Currency)
		if err != nil {
			return err // a currency the table does not know is a bug, as in the bill
		}
		rec := []string{r.Currency, second(r), start, end, zone, postings.FormatMinor(r.Opening, cur)}
		for _, c := range Categories() {
			rec = append(rec, postings.FormatMinor(r.Activity[c], cur))
		}
		rec = append(rec, postings.FormatMinor(r.Closing, cur), strconv.FormatInt(r.Movements, 10))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// PeriodTimes is the report's period as written in every export: its first
// instant and the instant after it, ISO 8601 with the zone's offset at
// each (a DST change between them gives two offsets), and the zone's name.
func PeriodTimes(rep *BalanceReport) (start, end, zone string) {
	return rep.From.Format(time.RFC3339), rep.To.In(rep.From.Location()).Format(time.RFC3339), rep.From.Location().String()
}

// EncodeReportCSV is the report file (totals false) or its totals file,
// whole: the report is a few rows a currency, so the API and the console
// encode it before they answer, and a failure is a clean error, never a
// short file.
func EncodeReportCSV(rep *BalanceReport, totals bool) ([]byte, error) {
	var b bytes.Buffer
	write := WriteReportCSV
	if totals {
		write = WriteReportTotalsCSV
	}
	err := write(&b, rep)
	return b.Bytes(), err
}
