package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `gateway report balance`: the table, JSON and the CSV files (the API's
// names, into a directory), the totals, and every usage error with exit 2.
func TestReportBalanceCommand(t *testing.T) {
	t.Parallel()
	g, c := newShopGateway(t, "Report shop", "USD,KWD", "USD 100.50", "KWD 7.125")
	from, to := aroundToday()
	args := []string{"report", "balance", "--shop-no", c.ShopNo, "--from", from, "--to", to}

	out := g.mustRun(args...)
	for _, want := range []string{"Balance report of " + c.ShopNo, "days in UTC", "deposits", "KWD", "funding", "receivable", "7.125", "100.50"} {
		if !strings.Contains(out, want) {
			t.Errorf("report balance printed no %q:\n%s", want, out)
		}
	}
	var rep struct {
		TimeZone, PeriodStart string
		Rows                  []struct {
			Currency, AccountClass, Opening, Closing string
			Activity                                 map[string]string
		}
	}
	js := g.mustRun(append(args, "--format", "json", "--time-zone", "Asia/Kolkata", "--currency", "KWD")...)
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, js)
	}
	if rep.TimeZone != "Asia/Kolkata" || !strings.HasSuffix(rep.PeriodStart, "+05:30") || len(rep.Rows) != 4 ||
		rep.Rows[0].AccountClass != "funding" || rep.Rows[0].Closing != "7.125" || rep.Rows[0].Activity["deposits"] != "7.125" {
		t.Errorf("report balance --format json: %s", js)
	}

	dir := t.TempDir()
	g.mustRun(append(args, "--format", "csv", "--output", dir)...)
	g.mustRun(append(args, "--format", "csv", "--totals", "--output", dir)...)
	for name, want := range map[string]string{
		"balance_" + c.ShopNo + "_" + from + "_" + to + "_UTC.csv":        "USD,funding,",
		"balance-totals_" + c.ShopNo + "_" + from + "_" + to + "_UTC.csv": "USD,4,",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.HasPrefix(string(b), "currency,") || !strings.Contains(string(b), "\n"+want) {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}

	for want, bad := range map[string][]string{
		"--time-zone: must be an IANA time zone": {"--time-zone", "Mars/Olympus"},
		"--to: must not be before --from":        {"--from", to, "--to", from},
		"--to: must be within 366 days":          {"--from", "2020-01-01", "--to", "2026-01-01"},
		"--format must be text, json or csv":     {"--format", "xml"},
		"--currency":                             {"--currency", "ZZZ"},
		"--from: must be a date YYYY-MM-DD":      {"--from", "2031-02-29"},
	} {
		r := g.run(append(args, bad...)...)
		if r.code() != 2 || r.err == nil || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%v: exit %d %v, want 2 naming %q", bad, r.code(), r.err, want)
		}
	}
	r := g.run("report", "balance", "--shop-no", "SH0000000000", "--from", from, "--to", to)
	if r.code() != 2 || !strings.Contains(r.err.Error(), "not found") {
		t.Errorf("an unknown shop: exit %d %v", r.code(), r.err)
	}
}
