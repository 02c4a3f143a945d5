package client

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// BillQuery selects bill lines: the UTC days StartDate to EndDate, both
// included (YYYY-MM-DD), and a page (from 1) of Size lines (1 to 500).
// Zero Page and Size mean the gateway's defaults (1 and 50) for Bill, and
// the whole range for BillCSV.
//
// Types, CardNo and Currency, when set, keep only the lines of those entry
// kinds (DEPOSIT, CARD_AUTH, …), of that card and in that currency; Total
// then counts those. Another merchant's card gives an empty bill.
type BillQuery struct {
	StartDate string   `query:"startDate"`
	EndDate   string   `query:"endDate"`
	Page      int      `query:"page"`
	Size      int      `query:"size"`
	Types     []string `query:"type"`
	CardNo    string   `query:"cardNo"`
	Currency  string   `query:"currency"`
}

func (q BillQuery) values() url.Values {
	v := url.Values{"startDate": {q.StartDate}, "endDate": {q.EndDate}}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Size > 0 {
		v.Set("size", strconv.Itoa(q.Size))
	}
	for _, t := range q.Types {
		v.Add("type", t)
	}
	if q.CardNo != "" {
		v.Set("cardNo", q.CardNo)
	}
	if q.Currency != "" {
		v.Set("currency", q.Currency)
	}
	return v
}

// BillPage is a page of the bill (spec 2.1's paginated structure).
type BillPage struct {
	// Total is the number of lines in the whole range.
	Total int64      `json:"total"`
	List  []BillLine `json:"list"`
}

// BillLine is one movement of a funding account or of a card's available
// balance, held funds or receivable (spec 2.7; docs/finance.md).
type BillLine struct {
	BillID       string    `json:"billId"`
	Type         string    `json:"type"` // what the money did: DEPOSIT, CARD_FUND, …, FEE, RECEIVABLE, RECEIVABLE_RECOVERY
	Amount       Decimal   `json:"amount"`
	Currency     string    `json:"currency"`
	TS           time.Time `json:"ts"`
	Account      string    `json:"account"` // FUNDING, the cardNo, HELD:<cardNo> or RECEIVABLE:<cardNo>
	CardNo       string    `json:"cardNo,omitempty"`
	TxID         string    `json:"txId,omitempty"`
	AuthID       string    `json:"authId,omitempty"`
	BalanceAfter Decimal   `json:"balanceAfter"`
	Seq          int64     `json:"seq"`
	BillSeq      int64     `json:"billSeq"`
	AccountType  string    `json:"accountType"`         // FUNDING, AVAILABLE, HELD or RECEIVABLE
	RelatedTo    int64     `json:"relatedTo,omitempty"` // on a FEE line: the seq of the movement it belongs to
}

// Bill is GET /shop/bill/list.
func (c *Client) Bill(ctx context.Context, q BillQuery, opts ...CallOption) (*BillPage, error) {
	var out BillPage
	if err := c.call(ctx, opListBill, q.values(), nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// BillCSVInfo is what the CSV's headers say.
type BillCSVInfo struct {
	// Total is X-Total-Count: the lines in the range.
	Total int64
	// Filename is the Content-Disposition's file name.
	Filename string
	// Bytes is how much was written.
	Bytes int64
}

// errCSVStarted: a CSV cut after its first bytes cannot be retried into
// the same writer.
var errCSVStarted = fmt.Errorf("%w: the CSV was cut after it started; call again with a fresh writer", ErrStreamStarted)

// BillCSV is GET /shop/bill/list with Accept: text/csv: it writes the CSV
// to w as it arrives (the whole range can be large). A failure before the
// first byte is retried like any GET; one after it is returned, and w
// holds a partial file.
func (c *Client) BillCSV(ctx context.Context, q BillQuery, w io.Writer, opts ...CallOption) (*BillCSVInfo, error) {
	return c.streamCSV(ctx, opListBill, q.values(), w, opts)
}

// streamCSV is a GET of op with Accept: text/csv whose body goes to w as
// it arrives: retried like any GET until its first byte, never after.
func (c *Client) streamCSV(ctx context.Context, op operation, query url.Values, w io.Writer, opts []CallOption) (*BillCSVInfo, error) {
	var cc callConfig
	for _, o := range opts {
		o(&cc)
	}
	info := &BillCSVInfo{}
	started := false
	req := &Request{Method: op.method, Path: op.path, Query: query, Accept: "text/csv",
		Retryable: true, Retry: cc.retry, OnAttempt: cc.onAttempt,
		Stream: func(resp *http.Response) error {
			info.Total, _ = strconv.ParseInt(resp.Header.Get("X-Total-Count"), 10, 64)
			info.Filename = filenameOf(resp.Header.Get("Content-Disposition"))
			n, err := io.Copy(writerFunc(func(p []byte) (int, error) {
				started = true
				return w.Write(p)
			}), resp.Body)
			info.Bytes = n
			if err != nil && started {
				return fmt.Errorf("%w: %w", errCSVStarted, err)
			}
			return err
		}}
	req.Header = cc.header()
	if err := c.caller.Do(ctx, req, nil); err != nil {
		return nil, err
	}
	return info, nil
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// filenameOf reads filename= of a Content-Disposition.
func filenameOf(cd string) string {
	_, params, err := mime.ParseMediaType(cd)
	if err != nil {
		return ""
	}
	return params["filename"]
}
