package console

import (
	"encoding/csv"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

// The bill, with the API's filters and bounds (docs/api.md, "Bill"): a
// range of UTC days of at most 366, pages of at most 500 lines up to page
// 1,000,000; the CSV has the API's columns. Without dates the page shows
// the last seven days, a convenience the API does not have.
const (
	billPageMax     = 1_000_000
	billSizeMax     = 500
	billSizeDefault = 50
	billDaysDefault = 7
	billCSVBatch    = 500
)

type billQuery struct {
	Start, End time.Time
	Page, Size int
}

func (q billQuery) from() time.Time { return q.Start }
func (q billQuery) to() time.Time   { return q.End.AddDate(0, 0, 1) }

// values are the query's parameters, for links to other pages.
func (q billQuery) values(page int) string {
	v := url.Values{"startDate": {q.Start.Format(postings.DayLayout)}, "endDate": {q.End.Format(postings.DayLayout)},
		"size": {strconv.Itoa(q.Size)}}
	if page > 0 {
		v.Set("page", strconv.Itoa(page))
	}
	return v.Encode()
}

func (s *Server) parseBill(r *http.Request) (billQuery, error) {
	var q billQuery
	var err error
	if q.Start, q.End, err = host.ParseDays(r, s.now(), billDaysDefault); err != nil {
		return q, err
	}
	if q.Page, err = host.QueryInt(r, "page", 1, billPageMax, 1); err != nil {
		return q, err
	}
	q.Size, err = host.QueryInt(r, "size", 1, billSizeMax, billSizeDefault)
	return q, err
}

type billLine struct {
	bill.Line
	BillID string
}

type billData struct {
	Q               billQuery
	Total           int64
	Pages           int64
	Lines           []billLine
	Prev, Next, CSV string
}

func (s *Server) bill(w http.ResponseWriter, r *http.Request, sess *session) {
	q, err := s.parseBill(r)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	p, err := s.cfg.Bills.Bill(r.Context(), sess.user.MerchantID, q.from(), q.to(), q.Page, q.Size)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	d := billData{Q: q, Total: p.Total, Pages: (p.Total + int64(q.Size) - 1) / int64(q.Size),
		CSV: "/bill.csv?" + q.values(0)}
	for _, l := range p.Lines {
		d.Lines = append(d.Lines, billLine{Line: l, BillID: billID(sess.user.ShopNo, l.BillSeq)})
	}
	if q.Page > 1 {
		d.Prev = "/bill?" + q.values(q.Page-1)
	}
	if int64(q.Page) < d.Pages {
		d.Next = "/bill?" + q.values(q.Page+1)
	}
	s.render(w, r, http.StatusOK, "bill", "Bill", d)
}

// billID is the API's id of a line (api/bill.go).
func billID(shopNo string, billSeq int64) string {
	return "bil_" + shopNo + "_" + strconv.FormatInt(billSeq, 10)
}

// billCSVHeader is the API's CSV header (api/bill.go).
var billCSVHeader = []string{"billId", "type", "amount", "currency", "ts", "account", "cardNo", "txId",
	"authId", "balanceAfter", "seq", "billSeq", "accountType", "relatedTo"}

// billCSV streams the whole range as CSV. An error once the answer has
// started is logged and the connection aborted, so a short file is never
// taken for a whole one.
func (s *Server) billCSV(w http.ResponseWriter, r *http.Request, sess *session) {
	q, err := s.parseBill(r)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	ctx, m := r.Context(), sess.user.MerchantID
	rng, err := s.cfg.Bills.BillRange(ctx, m, q.from(), q.to())
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	// The API's name for the same range (postings.BillFileName), so that
	// the two downloads of one bill are one document to finance.
	name := postings.BillFileName(sess.user.ShopNo, q.Start, q.End, 0, 0)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.Header().Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	_ = cw.Write(billCSVHeader)
	err = s.cfg.Bills.BillStream(ctx, m, rng, billCSVBatch, func(lines []bill.Line) error {
		for i := range lines {
			if err := cw.Write(billCSVRecord(sess.user.ShopNo, &lines[i])); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	if err != nil {
		s.cfg.Log.Error("console bill CSV broken off", "err", err)
		panic(http.ErrAbortHandler)
	}
}

func billCSVRecord(shopNo string, b *bill.Line) []string {
	acct := b.AccountName()
	return []string{billID(shopNo, b.BillSeq), string(b.Kind), plainAmount(b.Amount, b.Currency), b.Currency,
		b.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), csvText(acct), csvText(b.CardNo), csvText(b.TxID),
		csvText(b.AuthID), plainAmount(b.BalanceAfter, b.Currency),
		strconv.FormatInt(b.MerchantSeq, 10), strconv.FormatInt(b.BillSeq, 10),
		b.AccountTypeName(), relatedCell(b.RelatedTo)}
}

// plainAmount is an amount with the currency's decimals and no code.
func plainAmount(minor int64, cur string) string {
	c, err := postings.LookupCurrency(cur)
	if err != nil {
		return strconv.FormatInt(minor, 10)
	}
	return postings.FormatMinor(minor, c)
}

// csvText defuses a cell a spreadsheet would read as a formula (as the API).
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// relatedCell is relatedTo as a CSV cell, as the API writes it.
func relatedCell(seq int64) string {
	if seq == 0 {
		return ""
	}
	return strconv.FormatInt(seq, 10)
}
