package api

// The balance report's handler against the fakes (fakes_test.go): its
// door (days, time zone, currency), JSON, CSV, totals and file names.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
)

// BalanceReport (Bills): a fixture of one currency's four classes, the
// card's row with a hold and a spend.
func (f *fakeServices) BalanceReport(ctx context.Context, m int64, from, to time.Time, cur string) (*bill.BalanceReport, error) {
	err := f.answer(ctx, "BalanceReport", m, [3]any{from, to, cur}, nil)
	rep := &bill.BalanceReport{From: from, To: to}
	for _, cl := range bill.AccountClasses() {
		act := map[bill.Category]int64{}
		for _, c := range bill.Categories() {
			act[c] = 0
		}
		row := bill.ReportRow{Currency: "KWD", Class: cl, Activity: act}
		if cl == bill.ClassCard {
			row.Opening, row.Activity[bill.CategoryHolds], row.Activity[bill.CategoryCardSpend], row.Closing, row.Movements = 10_000, -1_234, -5, 8_761, 2
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, err
}

func TestHandleBalanceReport(t *testing.T) {
	t.Parallel()
	paris, _ := time.LoadLocation("Europe/Paris")
	q := "?startDate=2026-03-29&endDate=2026-03-29"
	zero := `"card_funding":0.000,"card_spend":0.000,"deposits":0.000,"fees":0.000,"fx":0.000,"holds":0.000,"receivables":0.000,"refunds":0.000,"remittances":0.000`
	zeroRow := `{"opening":0.000,"activity":{"adjustments":0.000,` + zero + `},"closing":0.000,"movements":0}`
	card := `"opening":10.000,"activity":{"adjustments":0.000,"card_funding":0.000,"card_spend":-0.005,"deposits":0.000,"fees":0.000,` +
		`"fx":0.000,"holds":-1.234,"receivables":0.000,"refunds":0.000,"remittances":0.000},"closing":8.761,"movements":2`
	cats := `["card_funding","card_spend","refunds","fees","remittances","fx","adjustments","deposits","holds","receivables"]`
	cases := []handlerCase{
		// UTC by default; the whole of the last day.
		{name: "UTC", query: q, call: "BalanceReport",
			in: [3]any{time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), ""},
			data: `{"shopNo":"SH0000000001","startDate":"2026-03-29","endDate":"2026-03-29","timeZone":"UTC",` +
				`"periodStart":"2026-03-29T00:00:00Z","periodEnd":"2026-03-30T00:00:00Z","categories":` + cats + `,` +
				`"currencies":[{"currency":"KWD","accounts":[{"accountClass":"funding",` + zeroRow[1:] + `,{"accountClass":"card",` + card + `},` +
				`{"accountClass":"held",` + zeroRow[1:] + `,{"accountClass":"receivable",` + zeroRow[1:] + `],"total":{` + card + `}}]}`},
		// Paris's spring-forward day is 23 hours; the offsets are stated.
		{name: "DST day", query: q + "&timeZone=Europe/Paris&currency=KWD", call: "BalanceReport",
			in: [3]any{time.Date(2026, 3, 29, 0, 0, 0, 0, paris), time.Date(2026, 3, 30, 0, 0, 0, 0, paris), "KWD"}},
		{name: "no startDate", query: "?endDate=2026-03-02", field: "startDate"},
		{name: "no endDate", query: "?startDate=2026-03-02", field: "endDate"},
		{name: "no such day", query: "?startDate=2026-02-29&endDate=2026-03-02", field: "startDate"},
		{name: "year 0", query: "?startDate=0000-01-01&endDate=0000-01-02", field: "startDate"},
		{name: "reversed", query: "?startDate=2026-03-02&endDate=2026-03-01", field: "endDate", message: "endDate: must not be before startDate"},
		{name: "367 days", query: "?startDate=2026-01-01&endDate=2027-01-02", field: "endDate"},
		{name: "unknown zone", query: q + "&timeZone=Mars/Olympus", field: "timeZone"},
		{name: "control character", query: q + "&timeZone=Europe/Paris%0A", field: "timeZone"},
		{name: "NUL", query: q + "&timeZone=%00", field: "timeZone"},
		{name: "path", query: q + "&timeZone=../../etc/passwd", field: "timeZone"},
		{name: "Local", query: q + "&timeZone=Local", field: "timeZone"},
		{name: "zone twice", query: q + "&timeZone=UTC&timeZone=UTC", field: "timeZone"},
		{name: "bad currency", query: q + "&currency=usd", field: "currency"},
	}
	runShopCases(t, http.MethodGet, "/shop/reports/balance", withErrors(cases, handlerCase{query: q, call: "BalanceReport"}))

	runShopCases(t, http.MethodGet, "/shop/reports/balance/totals", []handlerCase{
		{name: "totals", query: q + "&timeZone=Asia/Kolkata", call: "BalanceReport",
			data: `{"shopNo":"SH0000000001","startDate":"2026-03-29","endDate":"2026-03-29","timeZone":"Asia/Kolkata",` +
				`"periodStart":"2026-03-29T00:00:00+05:30","periodEnd":"2026-03-30T00:00:00+05:30",` +
				`"totals":[{"currency":"KWD","rows":4,` + card + `}]}`},
		{name: "unknown zone", query: q + "&timeZone=Nowhere", field: "timeZone"},
	})
}

// The report and its totals as CSV: the encoder's columns, no trailer, the
// period with its offsets, and the file names the console uses too.
func TestHandleBalanceReportCSV(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, name, header, row string
		rows                    int
	}{
		{"/shop/reports/balance", "balance_SH0000000001_2026-10-25_2026-10-25_Europe-Paris.csv",
			strings.Join(bill.ReportCSVHeader(), ","),
			"KWD,card,2026-10-25T00:00:00+02:00,2026-10-26T00:00:00+01:00,Europe/Paris,10.000,0.000,-0.005,0.000,0.000,0.000,0.000,0.000,0.000,-1.234,0.000,8.761,2", 4},
		{"/shop/reports/balance/totals", "balance-totals_SH0000000001_2026-10-25_2026-10-25_Europe-Paris.csv",
			strings.Join(bill.ReportTotalsCSVHeader(), ","),
			"KWD,4,2026-10-25T00:00:00+02:00,2026-10-26T00:00:00+01:00,Europe/Paris,10.000,0.000,-0.005,0.000,0.000,0.000,0.000,0.000,0.000,-1.234,0.000,8.761,2", 1},
	} {
		g := newFakeGateway(t)
		req := httptest.NewRequest(http.MethodGet, tc.path+"?startDate=2026-10-25&endDate=2026-10-25&timeZone=Europe/Paris", nil)
		req.Header.Set(headerShopNo, fakeShopNo)
		req.Header.Set(headerPublicKey, fakePublicKey)
		req.Header.Set("Accept", "text/csv")
		w := httptest.NewRecorder()
		g.shop.ServeHTTP(w, req)
		lines := strings.Split(strings.TrimSuffix(w.Body.String(), "\n"), "\n")
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" || len(lines) != 1+tc.rows ||
			lines[0] != tc.header || !strings.Contains(w.Body.String(), tc.row+"\n") {
			t.Errorf("%s: %d %v\n%s", tc.path, w.Code, w.Header(), w.Body)
		}
		if cd := w.Header().Get("Content-Disposition"); cd != "attachment; filename="+tc.name {
			t.Errorf("%s: Content-Disposition %q", tc.path, cd)
		}
	}
}
