package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
)

// contractReports drives the balance report and its totals through
// TestOpenAPIDocument's contract: JSON in UTC and in a zone, one currency,
// the CSV files, and the door's 400s, each answer checked against
// docs/openapi.yaml. sh has funded cards (the test's activity before).
func contractReports(t *testing.T, c *contract, sh shop) {
	t.Helper()
	today := time.Now().UTC()
	days := "startDate=" + today.AddDate(0, 0, -1).Format(time.DateOnly) + "&endDate=" + today.AddDate(0, 0, 1).Format(time.DateOnly)
	for _, path := range []string{"/shop/reports/balance", "/shop/reports/balance/totals"} {
		c.call(&sh, "GET", path+"?"+days, "").must(t, 200, 200)
		c.call(&sh, "GET", path+"?"+days+"&timeZone=Europe/Paris&currency=USD", "").must(t, 200, 200)
		status, h, body := c.callRaw(&sh, path+"?"+days+"&timeZone=America/New_York", "Accept", "text/csv")
		header := strings.Join(bill.ReportCSVHeader(), ",")
		if strings.HasSuffix(path, "/totals") {
			header = strings.Join(bill.ReportTotalsCSVHeader(), ",")
		}
		if status != http.StatusOK || !strings.HasPrefix(string(body), header+"\n") || h.Get("X-Total-Count") == "" {
			t.Errorf("%s CSV: HTTP %d %v\n%s", path, status, h, body)
		}
		c.call(&sh, "GET", path+"?"+days+"&timeZone=Mars/Olympus", "").must(t, 400, 400)
		c.call(&sh, "GET", path+"?startDate=2026-03-02&endDate=2026-03-01", "").must(t, 400, 400)
	}
	// The report's figures are the merchant's: USD's funding closes at the
	// account's balance (the activity is all before the period's end).
	var rep struct {
		Currencies []struct {
			Currency string `json:"currency"`
			Accounts []struct {
				AccountClass string `json:"accountClass"`
				Closing      any    `json:"closing"`
			} `json:"accounts"`
		} `json:"currencies"`
	}
	c.call(&sh, "GET", "/shop/reports/balance?"+days+"&currency=USD", "").must(t, 200, 200).into(t, &rep)
	if len(rep.Currencies) != 1 || rep.Currencies[0].Currency != "USD" || len(rep.Currencies[0].Accounts) != 4 {
		t.Errorf("balance report: %+v", rep)
	}
}
