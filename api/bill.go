package api

import (
	"encoding/csv"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The bill export, GET /shop/bill/list (spec 2.7, 4 rule 4; docs/api.md,
// "Bill"): every movement of the merchant's funding accounts and card
// balances in a range of UTC days, in bill sequence order, as JSON pages or
// as CSV.

// Bounds of the bill query (docs/api.md).
const (
	billDaysMax     = 366
	billPageMax     = 1_000_000
	billSizeMax     = 500
	billPageDefault = 1
	billSizeDefault = 50
	// billCSVBatch is how many lines a whole-range CSV export reads at a time.
	billCSVBatch = 500
	dateLayout   = postings.DayLayout
)

// billQuery is a validated bill request. paged is false when the request
// gave neither page nor size (the CSV export then streams the whole range).
type billQuery struct {
	start, end time.Time // the first and last day, both included
	page, size int
	paged      bool
	filter     bill.Filter
}

// from and to are the time range of the days: [start 00:00, end+1 00:00).
func (q billQuery) from() time.Time { return q.start }
func (q billQuery) to() time.Time   { return q.end.AddDate(0, 0, 1) }

// queryValue reads a query parameter given at most once.
func queryValue(c *gin.Context, name string) (string, bool, error) {
	vs, ok := c.GetQueryArray(name)
	if !ok {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", true, postings.FieldErrorf(name, "appears more than once")
	}
	return vs[0], true, nil
}

func queryDate(c *gin.Context, name string) (time.Time, error) {
	s, ok, err := queryValue(c, name)
	if err != nil {
		return time.Time{}, err
	}
	if !ok || s == "" {
		return time.Time{}, postings.FieldErrorf(name, "query parameter is required")
	}
	// A day PostgreSQL cannot hold (year 0000) would be a 500: the range
	// is checked here, before SQL (postings.ParseDay).
	return postings.ParseDay(name, s)
}

// queryInt reads an optional decimal integer in [lo, hi]: digits only, no
// sign.
func queryInt(c *gin.Context, name string, lo, hi, def int) (int, bool, error) {
	s, ok, err := queryValue(c, name)
	if err != nil || !ok {
		return def, false, err
	}
	bad := postings.FieldErrorf(name, "must be an integer from %d to %d", lo, hi)
	if s == "" || len(s) > 9 {
		return 0, true, bad
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, true, bad
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, true, bad
	}
	return n, true, nil
}

// parseBillQuery checks the query of GET /shop/bill/list; every refusal is
// a 400 naming its parameter.
func parseBillQuery(c *gin.Context) (billQuery, error) {
	var q billQuery
	var err error
	if q.start, err = queryDate(c, "startDate"); err != nil {
		return q, err
	}
	if q.end, err = queryDate(c, "endDate"); err != nil {
		return q, err
	}
	if q.end.Before(q.start) {
		return q, postings.FieldErrorf("endDate", "must not be before startDate")
	}
	if q.end.Sub(q.start) >= billDaysMax*24*time.Hour {
		return q, postings.FieldErrorf("endDate", "must be within %d days of startDate, both included", billDaysMax)
	}
	var hasPage, hasSize bool
	if q.page, hasPage, err = queryInt(c, "page", 1, billPageMax, billPageDefault); err != nil {
		return q, err
	}
	if q.size, hasSize, err = queryInt(c, "size", 1, billSizeMax, billSizeDefault); err != nil {
		return q, err
	}
	q.paged = hasPage || hasSize
	q.filter, err = parseBillFilter(c)
	return q, err
}

// billTypeValuesMax bounds the values of type (repeated or comma-separated)
// before they are deduplicated: every kind once, with room for repeats.
const billTypeValuesMax = 64

// parseBillFilter reads the optional filters of the bill: type (entry
// kinds, repeated or comma-separated), cardNo and currency. Another
// merchant's card, or an unknown one, is not refused: it has no lines, so
// the answer is the empty list an unknown card gives (docs/api.md).
func parseBillFilter(c *gin.Context) (bill.Filter, error) {
	var f bill.Filter
	var values []string
	for _, v := range c.QueryArray("type") {
		values = append(values, strings.Split(v, ",")...)
		if len(values) > billTypeValuesMax {
			return f, postings.FieldErrorf("type", "at most %d values", billTypeValuesMax)
		}
	}
	for _, v := range values {
		k := postings.Kind(v)
		if !k.ValidBillType() {
			return f, postings.FieldErrorf("type", "each value must be a bill line type: %s", billKindList)
		}
		if !slices.Contains(f.Kinds, k) {
			f.Kinds = append(f.Kinds, k)
		}
	}
	cardNo, ok, err := queryValue(c, "cardNo")
	if err != nil {
		return f, err
	}
	if ok {
		if err := checkCardNo("cardNo", cardNo); err != nil {
			return f, err
		}
		f.CardNo = cardNo
	}
	f.Currency, err = queryCurrency(c, "currency")
	return f, err
}

// billKindList names the entry kinds in the message of a bad type.
var billKindList = func() string {
	names := make([]string, 0, len(postings.BillTypes()))
	for _, k := range postings.BillTypes() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}()

// billAnswer is what a bill request reads: the total, then the lines of one
// page, or a stream of the whole range. Filtered or not, the handler and the
// CSV writer see the same three things.
type billAnswer struct {
	total  int64
	lines  []bill.Line
	stream func(batch int, fn func([]bill.Line) error) error
}

// readBill reads one page (paged) or the range to stream.
func readBill(c *gin.Context, l Bills, merchant int64, q billQuery, paged bool) (*billAnswer, error) {
	ctx := c.Request.Context()
	if q.filter.Empty() {
		if paged {
			p, err := l.Bill(ctx, merchant, q.from(), q.to(), q.page, q.size)
			if err != nil {
				return nil, err
			}
			return &billAnswer{total: p.Total, lines: p.Lines}, nil
		}
		r, err := l.BillRange(ctx, merchant, q.from(), q.to())
		if err != nil {
			return nil, err
		}
		return &billAnswer{total: r.Total, stream: func(batch int, fn func([]bill.Line) error) error {
			return l.BillStream(ctx, merchant, r, batch, fn)
		}}, nil
	}
	r, err := l.BillRange(ctx, merchant, q.from(), q.to())
	if err != nil {
		return nil, err
	}
	if paged {
		p, err := l.FilteredBill(ctx, merchant, r, q.filter, q.page, q.size)
		if err != nil {
			return nil, err
		}
		return &billAnswer{total: p.Matches, lines: p.Lines}, nil
	}
	fr, err := l.FilteredBillRange(ctx, merchant, r, q.filter)
	if err != nil {
		return nil, err
	}
	return &billAnswer{total: fr.Matches, stream: func(batch int, fn func([]bill.Line) error) error {
		return l.FilteredBillStream(ctx, merchant, fr, batch, fn)
	}}, nil
}

// billLineView is one entry of the bill (spec 2.7 and the fields docs/api.md
// adds). cardNo, txId and authId appear when the entry has them.
type billLineView struct {
	BillID       string         `json:"billId"`
	Type         string         `json:"type"`
	Amount       postings.Money `json:"amount"`
	Currency     string         `json:"currency"`
	Ts           string         `json:"ts"`
	Account      string         `json:"account"`
	CardNo       string         `json:"cardNo,omitempty"`
	TxID         string         `json:"txId,omitempty"`
	AuthID       string         `json:"authId,omitempty"`
	BalanceAfter postings.Money `json:"balanceAfter"`
	Seq          int64          `json:"seq"`
	BillSeq      int64          `json:"billSeq"`
	// Additive (issue 29, point 2; docs/finance.md): which of the
	// merchant's balances moved, and what a FEE line belongs to.
	AccountType string `json:"accountType"`
	RelatedTo   int64  `json:"relatedTo,omitempty"`
}

// billListView is the paginated structure of spec 2.1.
type billListView struct {
	Total int64          `json:"total"`
	List  []billLineView `json:"list"`
}

// billID is a line's id: the shop number and the bill sequence, both
// immutable, so the id is stable; clients treat it as opaque.
func billID(shopNo string, billSeq int64) string {
	return "bil_" + shopNo + "_" + strconv.FormatInt(billSeq, 10)
}

func newBillLineView(shopNo string, b *bill.Line) billLineView {
	acct := b.AccountName()
	return billLineView{
		BillID: billID(shopNo, b.BillSeq), Type: string(b.Kind),
		Amount: money(b.Amount, b.Currency), Currency: b.Currency, Ts: timestamp(b.CreatedAt),
		Account: acct, CardNo: b.CardNo, TxID: b.TxID, AuthID: b.AuthID,
		BalanceAfter: money(b.BalanceAfter, b.Currency), Seq: b.MerchantSeq, BillSeq: b.BillSeq,
		AccountType: b.AccountTypeName(), RelatedTo: b.RelatedTo,
	}
}

// handleBillList answers GET /shop/bill/list?startDate=&endDate=&page=&size=:
// JSON {total, list}, or CSV when the client accepts text/csv.
func handleBillList(l Bills) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Vary", "Accept")
		q, err := parseBillQuery(c)
		if err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		if acceptsCSV(c.Request.Header) {
			writeBillCSV(c, l, m, q)
			return
		}
		p, err := readBill(c, l, m.ID, q, true)
		if err != nil {
			writeError(c, err)
			return
		}
		v := billListView{Total: p.total, List: make([]billLineView, len(p.lines))}
		for i := range p.lines {
			v.List[i] = newBillLineView(m.ShopNo, &p.lines[i])
		}
		writeOK(c, v)
	}
}

// acceptsCSV reports whether Accept names text/csv with a non-zero quality.
func acceptsCSV(h http.Header) bool {
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || mt != "text/csv" {
				continue
			}
			if qv, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(qv, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// billCSVHeader is the CSV's first line: the JSON field names, in order.
var billCSVHeader = []string{"billId", "type", "amount", "currency", "ts", "account", "cardNo", "txId",
	"authId", "balanceAfter", "seq", "billSeq", "accountType", "relatedTo"}

// billCSVRecord is a line as CSV cells: the JSON values, amounts with the
// currency's decimals. A currency the table does not know is a bug, refused
// like the JSON encoder refuses it.
func billCSVRecord(v *billLineView) ([]string, error) {
	amount, err := v.Amount.MarshalJSON()
	if err != nil {
		return nil, err
	}
	after, err := v.BalanceAfter.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return []string{
		v.BillID, v.Type, string(amount), v.Currency, v.Ts, csvText(v.Account), csvText(v.CardNo),
		csvText(v.TxID), csvText(v.AuthID), string(after),
		strconv.FormatInt(v.Seq, 10), strconv.FormatInt(v.BillSeq, 10),
		v.AccountType, relatedCell(v.RelatedTo),
	}, nil
}

// csvText defuses a text cell that a spreadsheet would read as a formula
// (OWASP "CSV injection"): one starting with =, +, -, @, tab or CR gets a
// leading apostrophe. Amounts are numbers and are left alone.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeBillCSV answers the bill as CSV: one page when the request gave page
// or size, else the whole range, read in batches of billCSVBatch lines and
// flushed as it goes. Errors before the first byte are answered in the
// envelope; an error once the answer has started cannot change its status,
// so it is logged and the connection aborted: the client sees a broken
// transfer, never a silently short file.
func writeBillCSV(c *gin.Context, l Bills, m *merchant.Merchant, q billQuery) {
	a, err := readBill(c, l, m.ID, q, q.paged)
	if err != nil {
		writeError(c, err)
		return
	}
	page := 0 // the whole range
	if q.paged {
		page = q.page
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", mime.FormatMediaType("attachment",
		map[string]string{"filename": postings.BillFileName(m.ShopNo, q.start, q.end, page, q.size)}))
	c.Header("X-Total-Count", strconv.FormatInt(a.total, 10))
	echoVersion(c, nil) // the CSV's columns do not change with the version
	setOutcome(c, codeOK)
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	write := func(lines []bill.Line) error {
		for i := range lines {
			v := newBillLineView(m.ShopNo, &lines[i])
			rec, err := billCSVRecord(&v)
			if err != nil {
				return err
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		w.Flush()
		c.Writer.Flush()
		return w.Error()
	}
	if err = w.Write(billCSVHeader); err == nil {
		if q.paged {
			err = write(a.lines)
		} else {
			w.Flush()
			err = a.stream(billCSVBatch, write)
		}
	}
	if err == nil {
		w.Flush()
		err = w.Error()
	}
	c.Abort()
	if err != nil {
		setOutcome(c, http.StatusInternalServerError)
		logger(c).Error("bill export failed after the answer started", "error", err.Error())
		panic(http.ErrAbortHandler)
	}
}

// relatedCell is relatedTo as a CSV cell: empty when the line has none.
func relatedCell(seq int64) string {
	if seq == 0 {
		return ""
	}
	return strconv.FormatInt(seq, 10)
}
