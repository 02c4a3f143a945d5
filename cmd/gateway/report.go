package main

// `gateway report balance`: the balance report of a merchant over days in
// UTC or an IANA time zone (issue 29 point 3; docs/finance.md), as a table,
// JSON, or the same CSV files the API and the console give, under the same
// names.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/postings"
)

func cmdReportBalance(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report balance", "Print a merchant's balance report: per currency and account class (funding, card, held,\n"+
		"receivable), the opening balance, the activity by reporting category and the closing balance\n"+
		"(docs/finance.md). --format csv writes the API's CSV file; --totals its totals file.")
	shopNo := fs.String("shop-no", "", "the merchant's shop number (required)")
	fromText := fs.String("from", "", "first day, YYYY-MM-DD, included (required)")
	toText := fs.String("to", "", "last day, YYYY-MM-DD, included (required); at most 366 days from --from")
	zoneText := fs.String("time-zone", "", "IANA time zone of the day boundaries (default UTC)")
	currency := fs.String("currency", "", "only this currency")
	format := fs.String("format", "text", "text, json or csv")
	totals := fs.Bool("totals", false, "the totals file (one row per currency) instead of the report")
	output := fs.String("output", "", "write to this file, or into this directory under the API's file name (default: standard output)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *shopNo == "" {
		return usageError("--shop-no is required")
	}
	if *format != "text" && *format != "json" && *format != "csv" {
		return usageError("--format must be text, json or csv")
	}
	p, err := reportPeriodFlags(*fromText, *toText, *zoneText)
	if err != nil {
		return err
	}
	if *currency != "" {
		if _, err := postings.LookupCurrency(*currency); err != nil {
			return usageError(fmt.Sprintf("--currency: %s", postings.AsError(err).Message))
		}
	}
	l, m, done, err := openMerchant(ctx, e, *shopNo, true)
	if err != nil {
		return err
	}
	defer done()
	rep, err := l.Bills.BalanceReport(ctx, m.ID, p.From(), p.To(), *currency)
	if err != nil {
		return cliError(err)
	}
	name := postings.ReportFileName("balance", m.ShopNo, p.Start, p.End, p.Zone.String(), *currency, *totals)
	return writeReportOutput(e, *output, name, func(w io.Writer) error {
		switch {
		case *format == "csv" && *totals:
			return bill.WriteReportTotalsCSV(w, rep)
		case *format == "csv":
			return bill.WriteReportCSV(w, rep)
		case *format == "json":
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(newCLIReport(m.ShopNo, rep, *totals))
		}
		return writeReportText(w, m.ShopNo, rep, *totals)
	})
}

// reportPeriodFlags reads --from, --to and --time-zone as the API reads
// startDate, endDate and timeZone, naming the flags in usage errors.
func reportPeriodFlags(fromText, toText, zoneText string) (bill.Period, error) {
	from, err := parseDay("from", fromText)
	if err != nil {
		return bill.Period{}, err
	}
	to, err := parseDay("to", toText)
	if err != nil {
		return bill.Period{}, err
	}
	zone, err := bill.ParseTimeZone("time-zone", zoneText)
	if err != nil {
		return bill.Period{}, usageError("--time-zone: " + postings.AsError(err).Message)
	}
	p, err := bill.NewPeriod(from, to, zone)
	if err != nil {
		msg := strings.NewReplacer("startDate", "--from", "endDate", "--to").Replace(postings.AsError(err).Message)
		return bill.Period{}, usageError("--to: " + msg)
	}
	return p, nil
}

// writeReportOutput writes to standard output, to a file, or into a
// directory under name (the API's and the console's file name).
func writeReportOutput(e *env, output, name string, write func(io.Writer) error) error {
	if output == "" {
		return write(e.stdout)
	}
	if st, err := os.Stat(output); err == nil && st.IsDir() {
		output = filepath.Join(output, name)
	}
	f, err := os.Create(output)
	if err != nil {
		return usageError(fmt.Sprintf("--output: %v", err))
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s\n", output)
	return nil
}

// cliReportRow is a row of the report (or of its totals, with rows) in the
// CLI's JSON: amounts as decimal strings in the currency's decimals.
type cliReportRow struct {
	Currency     string            `json:"currency"`
	AccountClass string            `json:"accountClass,omitempty"`
	Rows         int               `json:"rows,omitempty"`
	Opening      string            `json:"opening"`
	Activity     map[string]string `json:"activity"`
	Closing      string            `json:"closing"`
	Movements    int64             `json:"movements"`
}

type cliReport struct {
	ShopNo      string         `json:"shopNo"`
	TimeZone    string         `json:"timeZone"`
	PeriodStart string         `json:"periodStart"`
	PeriodEnd   string         `json:"periodEnd"`
	Rows        []cliReportRow `json:"rows"`
}

// reportRows are the rows to print: the report's, or its totals with the
// number of rows each sums.
func reportRows(rep *bill.BalanceReport, totals bool) ([]bill.ReportRow, map[string]int) {
	if !totals {
		return rep.Rows, nil
	}
	n := map[string]int{}
	for _, r := range rep.Rows {
		n[r.Currency]++
	}
	return rep.Totals(), n
}

func newCLIReport(shopNo string, rep *bill.BalanceReport, totals bool) cliReport {
	start, end, zone := bill.PeriodTimes(rep)
	out := cliReport{ShopNo: shopNo, TimeZone: zone, PeriodStart: start, PeriodEnd: end, Rows: []cliReportRow{}}
	rows, counts := reportRows(rep, totals)
	for _, r := range rows {
		cur, _ := postings.LookupCurrency(r.Currency)
		row := cliReportRow{Currency: r.Currency, AccountClass: string(r.Class), Rows: counts[r.Currency],
			Opening: postings.FormatMinor(r.Opening, cur), Closing: postings.FormatMinor(r.Closing, cur),
			Activity: map[string]string{}, Movements: r.Movements}
		for _, c := range bill.Categories() {
			row.Activity[string(c)] = postings.FormatMinor(r.Activity[c], cur)
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// writeReportText prints the report as a table, a line per currency and
// class (or per currency for the totals), the categories as columns.
func writeReportText(w io.Writer, shopNo string, rep *bill.BalanceReport, totals bool) error {
	start, end, zone := bill.PeriodTimes(rep)
	fmt.Fprintf(w, "Balance report of %s, from %s until %s (excluded), days in %s\n\n", shopNo, start, end, zone)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"currency", "class", "opening"}
	for _, c := range bill.Categories() {
		head = append(head, string(c))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "closing", "movements"), "\t")+"\t")
	rows, _ := reportRows(rep, totals)
	for _, r := range rows {
		cur, _ := postings.LookupCurrency(r.Currency)
		class := string(r.Class)
		if totals {
			class = "total"
		}
		cells := []string{r.Currency, class, postings.FormatMinor(r.Opening, cur)}
		for _, c := range bill.Categories() {
			cells = append(cells, postings.FormatMinor(r.Activity[c], cur))
		}
		cells = append(cells, postings.FormatMinor(r.Closing, cur), strconv.FormatInt(r.Movements, 10))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}
