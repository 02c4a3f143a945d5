package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// The balance report (docs/finance.md, "Balance report"): per currency and
// account class, the opening balance, the period's movements by reporting
// category and the closing balance, over whole days of a time zone.

var (
	opGetBalanceReport       = operation{"getBalanceReport", http.MethodGet, "/shop/reports/balance"}
	opGetBalanceReportTotals = operation{"getBalanceReportTotals", http.MethodGet, "/shop/reports/balance/totals"}
	reportOperations         = []operation{opGetBalanceReport, opGetBalanceReportTotals}
)

// ReportQuery selects a report: the days StartDate to EndDate included
// (YYYY-MM-DD, at most 366 days) in TimeZone (an IANA name; "" is UTC),
// and one Currency ("" for all).
type ReportQuery struct {
	StartDate string `query:"startDate"`
	EndDate   string `query:"endDate"`
	TimeZone  string `query:"timeZone"`
	Currency  string `query:"currency"`
}

func (q ReportQuery) values() url.Values {
	v := url.Values{"startDate": {q.StartDate}, "endDate": {q.EndDate}}
	if q.TimeZone != "" {
		v.Set("timeZone", q.TimeZone)
	}
	if q.Currency != "" {
		v.Set("currency", q.Currency)
	}
	return v
}

// ReportActivity is a period's movements by reporting category.
type ReportActivity struct {
	CardFunding Decimal `json:"card_funding"`
	CardSpend   Decimal `json:"card_spend"`
	Refunds     Decimal `json:"refunds"`
	Fees        Decimal `json:"fees"`
	Remittances Decimal `json:"remittances"`
	FX          Decimal `json:"fx"`
	Adjustments Decimal `json:"adjustments"`
	Deposits    Decimal `json:"deposits"`
	Holds       Decimal `json:"holds"`
	Receivables Decimal `json:"receivables"`
}

// ReportFigures: Opening + the sum of Activity = Closing, exactly.
type ReportFigures struct {
	Opening   Decimal        `json:"opening"`
	Activity  ReportActivity `json:"activity"`
	Closing   Decimal        `json:"closing"`
	Movements int64          `json:"movements"`
}

// BalanceReportRow is one account class (funding, card, held, receivable)
// of one currency.
type BalanceReportRow struct {
	AccountClass string `json:"accountClass"`
	ReportFigures
}

// BalanceReportCurrency is one currency's rows and their total.
type BalanceReportCurrency struct {
	Currency string             `json:"currency"`
	Accounts []BalanceReportRow `json:"accounts"`
	Total    ReportFigures      `json:"total"`
}

// BalanceReport is GET /shop/reports/balance's answer.
type BalanceReport struct {
	ShopNo      string                  `json:"shopNo"`
	StartDate   string                  `json:"startDate"`
	EndDate     string                  `json:"endDate"`
	TimeZone    string                  `json:"timeZone"`
	PeriodStart time.Time               `json:"periodStart"`
	PeriodEnd   time.Time               `json:"periodEnd"`
	Categories  []string                `json:"categories"`
	Currencies  []BalanceReportCurrency `json:"currencies"`
}

// BalanceReportTotal is one currency's rows summed.
type BalanceReportTotal struct {
	Currency string `json:"currency"`
	Rows     int64  `json:"rows"`
	ReportFigures
}

// BalanceReportTotals is GET /shop/reports/balance/totals's answer.
type BalanceReportTotals struct {
	ShopNo      string               `json:"shopNo"`
	StartDate   string               `json:"startDate"`
	EndDate     string               `json:"endDate"`
	TimeZone    string               `json:"timeZone"`
	PeriodStart time.Time            `json:"periodStart"`
	PeriodEnd   time.Time            `json:"periodEnd"`
	Totals      []BalanceReportTotal `json:"totals"`
}

// BalanceReport is GET /shop/reports/balance.
func (c *Client) BalanceReport(ctx context.Context, q ReportQuery, opts ...CallOption) (*BalanceReport, error) {
	var out BalanceReport
	if err := c.call(ctx, opGetBalanceReport, q.values(), nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// BalanceReportTotals is GET /shop/reports/balance/totals.
func (c *Client) BalanceReportTotals(ctx context.Context, q ReportQuery, opts ...CallOption) (*BalanceReportTotals, error) {
	var out BalanceReportTotals
	if err := c.call(ctx, opGetBalanceReportTotals, q.values(), nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// BalanceReportCSV writes the report's CSV to w as it arrives (the file a
// loader takes; its name in the answer's Content-Disposition).
func (c *Client) BalanceReportCSV(ctx context.Context, q ReportQuery, w io.Writer, opts ...CallOption) (*BillCSVInfo, error) {
	return c.streamCSV(ctx, opGetBalanceReport, q.values(), w, opts)
}

// BalanceReportTotalsCSV writes the totals file's CSV to w.
func (c *Client) BalanceReportTotalsCSV(ctx context.Context, q ReportQuery, w io.Writer, opts ...CallOption) (*BillCSVInfo, error) {
	return c.streamCSV(ctx, opGetBalanceReportTotals, q.values(), w, opts)
}
