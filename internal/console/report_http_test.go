package console_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/postings"
)

// The balance report page, over plain HTTP: a finance user sees the
// merchant's report (the fixture's deposits and cards), its two downloads
// are the API's encoder's bytes under the API's file names, the door
// refuses what the API refuses (400 naming the field), another merchant's
// user sees only their own, and an operator has no such page.
func TestBalanceReportPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	u := newWebUser(t, f, "fred.finance")
	zone, _ := bill.ParseTimeZone("timeZone", "Pacific/Kiritimati")
	// The fixture's movements are just before now: yesterday and today in
	// Kiritimati (UTC+14) hold them, even across its midnight.
	day := time.Now().In(zone).Format(postings.DayLayout)
	d, _ := postings.ParseDay("day", day)
	d0 := d.AddDate(0, 0, -1)
	q := "?startDate=" + d0.Format(postings.DayLayout) + "&endDate=" + day + "&timeZone=Pacific/Kiritimati"

	status, page := u.get(t, "/reports/balance"+q)
	// 6 deposits of 1,000.00 USD, less the two cards' 123.45 and 50.00.
	for _, want := range []string{`id="balance-report"`, "Pacific/Kiritimati", "5,826.55 USD", "173.45 USD", "2,500.50 EUR", "deposits", "receivables"} {
		if status != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("report page: %d, no %q\n%s", status, want, page)
		}
	}
	if status, _ := u.get(t, "/reports/balance"); status != http.StatusOK {
		t.Errorf("the page without dates: %d", status)
	}

	p, _ := bill.NewPeriod(d0, d, zone)
	rep, err := f.g.Bills.BalanceReport(ctx, f.a.ID, p.From(), p.To(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		totals bool
		write  func(*bytes.Buffer) error
	}{
		{"/reports/balance.csv", false, func(b *bytes.Buffer) error { return bill.WriteReportCSV(b, rep) }},
		{"/reports/balance-totals.csv", true, func(b *bytes.Buffer) error { return bill.WriteReportTotalsCSV(b, rep) }},
	} {
		res, err := u.c.Get(f.url(tc.path + q))
		if err != nil {
			t.Fatal(err)
		}
		var got, want bytes.Buffer
		_, _ = got.ReadFrom(res.Body)
		res.Body.Close()
		if err := tc.write(&want); err != nil {
			t.Fatal(err)
		}
		name := postings.ReportFileName("balance", f.a.ShopNo, d0, d, "Pacific/Kiritimati", "", tc.totals)
		if res.StatusCode != 200 || got.String() != want.String() || res.Header.Get("Content-Disposition") != "attachment; filename="+name {
			t.Errorf("%s: %d %q\n%s\nwant\n%s", tc.path, res.StatusCode, res.Header.Get("Content-Disposition"), got.String(), want.String())
		}
	}

	for bad, field := range map[string]string{
		"&timeZone=Mars/Olympus":                    "timeZone",
		"&timeZone=Europe/Paris%0A":                 "timeZone",
		"&currency=ZZZ":                             "currency",
		"&currency=USD&currency=EUR":                "currency",
		"x&startDate=2026-02-30&endDate=2026-03-01": "startDate",
	} {
		path := "/reports/balance?startDate=" + day + "&endDate=" + day + bad
		if strings.HasPrefix(bad, "x") {
			path = "/reports/balance?" + bad[1:]
		}
		status, body := u.get(t, path)
		if status != http.StatusBadRequest || !strings.Contains(body, field+":") {
			t.Errorf("%s: %d, want a 400 naming %s", path, status, field)
		}
	}
	if status, _ := u.get(t, "/reports/balance?startDate=2020-01-01&endDate=2026-01-01"); status != http.StatusBadRequest {
		t.Errorf("a period over 366 days: %d", status)
	}

	// Bolt's admin sees Bolt's 1,000.00 USD, less its card's 10.00.
	_, page = newWebUser(t, f, "bob.admin").get(t, "/reports/balance"+q)
	if !strings.Contains(page, "990.00 USD") || strings.Contains(page, "5,826.55") || strings.Contains(page, "EUR") {
		t.Errorf("another merchant's report shows the first's figures")
	}
	if status, _ := newWebUser(t, f, "olga.operator").get(t, "/reports/balance"+q); status != http.StatusForbidden {
		t.Errorf("an operator on a merchant's report: %d, want 403", status)
	}
}
