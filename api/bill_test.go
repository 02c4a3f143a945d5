package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// billLineOut is a bill entry as a client reads it; amounts stay the JSON
// numbers the server wrote.
type billLineOut struct {
	BillID       string      `json:"billId"`
	Type         string      `json:"type"`
	Amount       json.Number `json:"amount"`
	Currency     string      `json:"currency"`
	Ts           string      `json:"ts"`
	Account      string      `json:"account"`
	CardNo       string      `json:"cardNo"`
	TxID         string      `json:"txId"`
	AuthID       string      `json:"authId"`
	BalanceAfter json.Number `json:"balanceAfter"`
	Seq          int64       `json:"seq"`
	BillSeq      int64       `json:"billSeq"`
	AccountType  string      `json:"accountType"`
	RelatedTo    int64       `json:"relatedTo"`
}

type billListOut struct {
	Total int64         `json:"total"`
	List  []billLineOut `json:"list"`
}

// csvRecord is the CSV row the server writes for the line.
func (b billLineOut) csvRecord() []string {
	return []string{b.BillID, b.Type, b.Amount.String(), b.Currency, b.Ts, b.Account, b.CardNo, b.TxID, b.AuthID,
		b.BalanceAfter.String(), fmt.Sprint(b.Seq), fmt.Sprint(b.BillSeq), b.AccountType, relatedCell(b.RelatedTo)}
}

// todayClock is a ledger clock that stays on the UTC day the test started,
// so that a test running over midnight still finds its lines "today".
func todayClock() (func() time.Time, string) {
	start := time.Now().UTC()
	last := start.Truncate(24 * time.Hour).Add(24*time.Hour - time.Microsecond)
	return func() time.Time {
		if n := time.Now().UTC(); n.Before(last) {
			return n
		}
		return last
	}, start.Format("2006-01-02")
}

// dayAfter is the date n days after the date day (dateLayout).
func dayAfter(t testing.TB, day string, n int) string {
	t.Helper()
	d, err := time.Parse(dateLayout, day)
	if err != nil {
		t.Fatal(err)
	}
	return d.AddDate(0, 0, n).Format(dateLayout)
}

func billPath(start, end string, pageSize ...int) string {
	q := "/shop/bill/list?startDate=" + start + "&endDate=" + end
	if len(pageSize) == 2 {
		q += fmt.Sprintf("&page=%d&size=%d", pageSize[0], pageSize[1])
	}
	return q
}

func (s *testServer) bill(sh shop, path string) billListOut {
	s.t.Helper()
	var out billListOut
	a := s.request(&sh, "GET", path, "").must(s.t, 200, 200)
	a.into(s.t, &out)
	if out.List == nil {
		s.t.Fatalf("list is not an array: %s", a.raw)
	}
	return out
}

// billAll reads every page of a range, 500 lines at a time.
func (s *testServer) billAll(sh shop, start, end string) []billLineOut {
	s.t.Helper()
	var all []billLineOut
	for page := 1; ; page++ {
		p := s.bill(sh, billPath(start, end, page, 500))
		all = append(all, p.List...)
		if len(p.List) < 500 {
			if int64(len(all)) != p.Total {
				s.t.Fatalf("read %d lines, total %d", len(all), p.Total)
			}
			return all
		}
	}
}

// billCSV gets path with Accept: text/csv and parses the answer.
func (s *testServer) billCSV(sh shop, path string) (http.Header, [][]string) {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.srv.URL+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("X-Shop-No", sh.creds.ShopNo)
	req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	req.Header.Set("Accept", "text/csv")
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		s.t.Fatalf("CSV: HTTP %d %s", resp.StatusCode, raw)
	}
	recs, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil {
		s.t.Fatalf("CSV: %v: %s", err, raw)
	}
	return resp.Header, recs
}

func TestBillValidation(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	tests := []struct{ query, msg string }{
		{"", "startDate: query parameter is required"},
		{"?startDate=2026-01-01", "endDate: query parameter is required"},
		{"?startDate=&endDate=2026-01-01", "startDate: query parameter is required"},
		{"?startDate=2026-1-01&endDate=2026-01-01", "startDate: must be a date YYYY-MM-DD"},
		{"?startDate=2026-02-30&endDate=2026-03-01", "startDate: must be a date YYYY-MM-DD"},
		{"?startDate=20260101&endDate=2026-01-01", "startDate: must be a date YYYY-MM-DD"},
		{"?startDate=2026-01-01&endDate=2026-01-01T00:00:00Z", "endDate: must be a date YYYY-MM-DD"},
		{"?startDate=2026-01-01&endDate=01/02/2026", "endDate: must be a date YYYY-MM-DD"},
		{"?startDate=2026-02-29&endDate=2026-03-01", "startDate: must be a date YYYY-MM-DD"},
		{"?startDate=2024-02-30&endDate=2024-03-01", "startDate: must be a date YYYY-MM-DD"},
		// Days that parse but PostgreSQL cannot hold (it has no year 0),
		// or outside the accepted range: refused before SQL, never a 500.
		{"?startDate=0000-01-01&endDate=0000-01-31", "startDate: must be a day from 1970-01-01 to 9999-12-31"},
		{"?startDate=0000-12-31&endDate=0001-01-01", "startDate: must be a day from 1970-01-01 to 9999-12-31"},
		{"?startDate=0001-01-01&endDate=0001-01-01", "startDate: must be a day from 1970-01-01 to 9999-12-31"},
		{"?startDate=1969-12-31&endDate=1970-01-01", "startDate: must be a day from 1970-01-01 to 9999-12-31"},
		{"?startDate=9999-12-31&endDate=10000-01-01", "endDate: must be a date YYYY-MM-DD"},
		{"?startDate=+2026-01-01&endDate=2026-01-01", "startDate: must be a date YYYY-MM-DD"},
		{"?startDate=-2026-01-01&endDate=2026-01-01", "startDate: must be a date YYYY-MM-DD"},
		{"?startDate=2026-01-02&endDate=2026-01-01", "endDate: must not be before startDate"},
		{"?startDate=2025-01-01&endDate=2026-01-02", "endDate: must be within 366 days of startDate, both included"},
		{"?startDate=2026-01-01&startDate=2026-01-02&endDate=2026-01-03", "startDate: appears more than once"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=0", "page: must be an integer from 1 to 1000000"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=-1", "page: must be an integer from 1 to 1000000"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=1000001", "page: must be an integer from 1 to 1000000"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=99999999999999999999", "page: must be an integer from 1 to 1000000"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=1.5", "page: must be an integer from 1 to 1000000"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=", "page: must be an integer from 1 to 1000000"},
		{"?startDate=2026-01-01&endDate=2026-01-01&page=1&page=2", "page: appears more than once"},
		{"?startDate=2026-01-01&endDate=2026-01-01&size=0", "size: must be an integer from 1 to 500"},
		{"?startDate=2026-01-01&endDate=2026-01-01&size=501", "size: must be an integer from 1 to 500"},
		{"?startDate=2026-01-01&endDate=2026-01-01&size=%2B5", "size: must be an integer from 1 to 500"},
		{"?startDate=2026-01-01&endDate=2026-01-01&size=ten", "size: must be an integer from 1 to 500"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			a := s.request(&sh, "GET", "/shop/bill/list"+tt.query, "").must(t, 400, 400)
			if a.Message != tt.msg {
				t.Errorf("message %q, want %q", a.Message, tt.msg)
			}
			// A CSV request is refused the same way, in the envelope.
			c := s.request(&sh, "GET", "/shop/bill/list"+tt.query, "", "Accept", "text/csv").must(t, 400, 400)
			if c.Message != tt.msg || c.header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("CSV refusal %q %q", c.Message, c.header.Get("Content-Type"))
			}
		})
	}
	a := s.request(&sh, "GET", billPath("2026-01-02", "2026-01-01"), "").must(t, 400, 400)
	golden(t, "400_bill_end_before_start", a.raw)
	// The bounds themselves are accepted: 366 days, the last page, the
	// largest size, leading zeros.
	for _, q := range []string{
		billPath("2025-01-01", "2026-01-01"),
		billPath("2024-01-01", "2024-12-31", 1_000_000, 500),
		billPath("2026-01-01", "2026-01-01", 1, 1) + "&unknown=ignored",
		"/shop/bill/list?startDate=2026-01-01&endDate=2026-01-01&page=007&size=050",
		billPath("1970-01-01", "1970-01-01"),
		billPath("9999-01-01", "9999-12-31", 1_000_000, 500),
		billPath("2024-02-29", "2024-02-29"),
	} {
		if p := s.bill(sh, q); p.Total != 0 || len(p.List) != 0 {
			t.Errorf("%s: %+v", q, p)
		}
		if _, recs := s.billCSV(sh, q); len(recs) != 1 {
			t.Errorf("%s as CSV: %d records, want the header", q, len(recs))
		}
	}
	// Without credentials: 400 before anything else.
	s.request(nil, "GET", billPath("2026-01-01", "2026-01-01"), "").must(t, 400, 400)
}

// The entry's fields as they are rendered, and the defaults: without page
// and size, the first 50 lines.
func TestBillEntries(t *testing.T) {
	t.Parallel()
	now, today := todayClock()
	s := newTestServer(t, serverOptions{ledgerNow: now})
	sh := s.fundedShop()
	k := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"12.50"}`)
	a := s.request(&sh, "GET", billPath(today, today), "").must(t, 200, 200)
	var raw struct {
		Total int64            `json:"total"`
		List  []map[string]any `json:"list"`
	}
	a.into(t, &raw)
	if raw.Total != 4 || len(raw.List) != 4 {
		t.Fatalf("bill %s", a.raw)
	}
	// Deposits have no references: no cardNo, txId or authId at all.
	if _, ok := raw.List[0]["txId"]; ok {
		t.Errorf("absent reference rendered: %v", raw.List[0])
	}
	var p billListOut
	a.into(t, &p)
	fundOut, cardIn := p.List[2], p.List[3]
	want := billLineOut{BillID: fmt.Sprintf("bil_%s_3", sh.creds.ShopNo), Type: "CARD_FUND", Amount: "-12.50",
		Currency: "USD", Ts: fundOut.Ts, Account: "FUNDING", CardNo: k.CardNo, BalanceAfter: "987.50", Seq: 3, BillSeq: 3, AccountType: "FUNDING"}
	if fundOut != want || !timestampRE.MatchString(fundOut.Ts) || fundOut.Ts[:10] != today {
		t.Errorf("funding line\n got %+v\nwant %+v", fundOut, want)
	}
	want = billLineOut{BillID: fmt.Sprintf("bil_%s_4", sh.creds.ShopNo), Type: "CARD_FUND", Amount: "12.50",
		Currency: "USD", Ts: fundOut.Ts, Account: k.CardNo, CardNo: k.CardNo, BalanceAfter: "12.50", Seq: 3, BillSeq: 4, AccountType: "AVAILABLE"}
	if cardIn != want {
		t.Errorf("card line\n got %+v\nwant %+v", cardIn, want)
	}
	if !strings.Contains(string(a.raw), `"amount":-12.50,`) || !strings.Contains(string(a.raw), `"balanceAfter":987.50,`) {
		t.Errorf("amounts are not JSON numbers with the currency's decimals: %s", a.raw)
	}
	for i := 0; i < 60; i++ {
		s.deposit(sh, "EUR", 1)
	}
	if p := s.bill(sh, billPath(today, today)); p.Total != 64 || len(p.List) != 50 || p.List[49].BillSeq != 50 {
		t.Errorf("default page: total %d, %d lines", p.Total, len(p.List))
	}
	if p := s.bill(sh, billPath(today, today)+"&page=2"); len(p.List) != 14 || p.List[0].BillSeq != 51 {
		t.Errorf("page 2 of the default size: %d lines", len(p.List))
	}
	// Other days are empty; the range ending today holds everything.
	yesterday := dayAfter(t, today, -1) // the ledger's yesterday, not the wall clock's
	if p := s.bill(sh, billPath(yesterday, yesterday)); p.Total != 0 || len(p.List) != 0 {
		t.Errorf("yesterday %+v", p)
	}
	if p := s.bill(sh, billPath(yesterday, today, 1, 500)); p.Total != 64 {
		t.Errorf("yesterday to today: total %d", p.Total)
	}
}

// errExpected tells the business refusals a random workload runs into from
// real failures.
func errExpected(err error) bool {
	switch postings.ErrorCode(err) {
	case postings.EINSUFFICIENT, postings.ESTATE, postings.ELIMIT, postings.EFORBIDDEN:
		return true
	}
	return false
}

// A random workload through the ledger (deposits, cards, transfers both
// ways and across currencies, authorizations, clearings below and above the
// hold, reversals, refunds, cancels): the bill amounts sum, per currency,
// to the change of the merchant's funding and card balances; each account's
// balanceAfter follows from its amounts and ends at its balance; the CSV
// holds the same rows as the JSON.
var billSeed = flag.Int64("bill.seed", 0, "seed of TestBillSumsToBalances's workload (0: the clock)")

func TestBillSumsToBalances(t *testing.T) {
	t.Parallel()
	now, today := todayClock()
	s := newTestServer(t, serverOptions{ledgerNow: now})
	ctx := context.Background()
	l := s.l
	for _, pair := range [][3]string{{"USD", "EUR", "0.91"}, {"EUR", "USD", "1.09"}} {
		if _, err := l.FX.Set(ctx, pair[0], pair[1], pair[2], 40); err != nil {
			t.Fatal(err)
		}
	}
	sh := s.newShop(merchant.Spec{Currencies: []string{"USD", "EUR"}})
	other := s.fundedShop() // its lines must not appear
	seed := *billSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (reproduce: go test ./api -run 'TestBillSumsToBalances$' -args -bill.seed=%d)", seed, seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 7))
	curs := []string{"USD", "EUR"}
	bins := map[string]string{"USD": "453201", "EUR": "522302"}
	var (
		issued  []*cards.Card
		auths   []string
		msg     int
		counted = map[string]int{}
	)
	next := func() string { msg++; return fmt.Sprintf("bill-msg-%d", msg) }
	check := func(op string, err error) {
		t.Helper()
		if err != nil && !errExpected(err) {
			t.Fatalf("%s: %v", op, err)
		}
		if err == nil {
			counted[op]++
		}
	}
	s.deposit(sh, "USD", 5_000_00)
	s.deposit(sh, "EUR", 5_000_00)
	for i := 0; i < 400; i++ {
		cur := curs[rnd.IntN(2)]
		var card *cards.Card
		if len(issued) > 0 {
			card = issued[rnd.IntN(len(issued))]
		}
		switch op := rnd.IntN(10); {
		case op == 0 || card == nil:
			k, err := l.Cards.CreateCard(ctx, sh.m.ID, cards.CreateCardInput{Bin: bins[cur], Currency: cur, Amount: rnd.Int64N(200_00)}, nil)
			check("create", err)
			if err == nil {
				issued = append(issued, k)
			}
		case op == 1:
			_, err := l.Deposit(ctx, sh.m.ID, cur, 1+rnd.Int64N(500_00), nil)
			check("deposit", err)
		case op <= 3:
			dir := []string{cards.DirectionIn, cards.DirectionOut}[rnd.IntN(2)]
			_, err := l.Cards.Transfer(ctx, sh.m.ID, cards.TransferInput{CardNo: card.CardNo, Amount: 1 + rnd.Int64N(50_00),
				Currency: cur, Direction: dir}, nil)
			if cur != card.Currency {
				dir += " across currencies"
				// One cent at 0.91 is less than one cent of the card's
				// currency: a real refusal, named by its field, not a
				// fault of the workload (seed 1795800053981817929 drew it).
				if postings.ErrorCode(err) == postings.EINVALID && strings.Contains(err.Error(), "less than one minor unit") {
					break
				}
			}
			check("transfer "+dir, err)
		case op <= 5:
			r, err := l.Network.Authorize(ctx, network.AuthRequest{MessageID: next(), CardNo: card.CardNo, Amount: 1 + rnd.Int64N(40_00),
				Currency: cur, MerchantName: "Shop", MCC: "5999", MerchantCountry: "DE"})
			check("authorize", err)
			if err == nil && r.Approved {
				auths = append(auths, r.AuthID)
			}
		case op <= 7 && len(auths) > 0:
			i := rnd.IntN(len(auths))
			id := auths[i]
			auths = append(auths[:i], auths[i+1:]...)
			if rnd.IntN(4) == 0 {
				_, err := l.Network.Reverse(ctx, network.ReverseRequest{MessageID: next(), AuthID: id, Amount: 0})
				check("reverse", err)
				break
			}
			var held struct {
				Amount int64 `bun:"txn_amount"`
			}
			if err := l.DB().NewRaw(`select txn_amount from authorizations where auth_id = ?`, id).Scan(ctx, &held); err != nil {
				t.Fatal(err)
			}
			// Below, at or above the hold.
			amount := max(1, held.Amount*int64(50+rnd.IntN(100))/100)
			_, err := l.Network.Clear(ctx, network.ClearRequest{MessageID: next(), AuthID: id, Amount: amount})
			check("clear", err)
		case op == 8:
			_, err := l.Network.Refund(ctx, network.RefundRequest{MessageID: next(), CardNo: card.CardNo, Amount: 1 + rnd.Int64N(10_00), Currency: card.Currency})
			check("refund", err)
		case rnd.IntN(3) == 0:
			_, err := l.Cards.CancelCard(ctx, sh.m.ID, card.CardNo, nil)
			check("cancel", err)
		}
	}
	t.Logf("operations: %v", counted)
	s.deposit(other, "USD", 1_00)

	lines := s.billAll(sh, today, today)
	sums := map[string]int64{}
	last := map[string]int64{} // account|currency → balanceAfter
	types := map[string]bool{}
	for i, b := range lines {
		if b.BillSeq != int64(i+1) || b.BillID != fmt.Sprintf("bil_%s_%d", sh.creds.ShopNo, b.BillSeq) {
			t.Fatalf("line %d: billSeq %d billId %s", i, b.BillSeq, b.BillID)
		}
		if !documentedBillTypes[b.Type] {
			t.Errorf("undocumented type %s", b.Type)
		}
		types[b.Type] = true
		cur := postings.MustCurrency(b.Currency)
		amt, err := postings.ParseSignedAmount(b.Amount.String(), cur)
		if err != nil || amt == 0 {
			t.Fatalf("amount %s: %v", b.Amount, err)
		}
		after, err := postings.ParseSignedAmount(b.BalanceAfter.String(), cur)
		if err != nil {
			t.Fatalf("balanceAfter %s: %v", b.BalanceAfter, err)
		}
		key := b.Account + "|" + b.Currency
		if last[key]+amt != after {
			t.Errorf("line %d (%s): %d + %d != balanceAfter %d", b.BillSeq, key, last[key], amt, after)
		}
		// Every balance but what a card owes (its receivable, zero or
		// negative) stays at or above zero.
		if after < 0 && b.AccountType != "RECEIVABLE" {
			t.Errorf("line %d: negative balance after %d", b.BillSeq, after)
		}
		if after > 0 && b.AccountType == "RECEIVABLE" {
			t.Errorf("line %d: a receivable in credit %d", b.BillSeq, after)
		}
		last[key] = after
		sums[b.Currency] += amt
	}
	t.Logf("%d lines, types %v", len(lines), types)
	// Every balance of the merchant: since issue 29 point 2 a card's held
	// funds and receivable are bill accounts too (HELD:<card>,
	// RECEIVABLE:<card>).
	bals, err := audit.New(l.Ledger).Balances(ctx, sh.m.ID, postings.AccountFunding, postings.AccountCardAvailable,
		postings.AccountCardHeld, postings.AccountCardReceivable)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, b := range bals {
		want[b.Account.Currency] += b.Balance
		key := "FUNDING|" + b.Account.Currency
		switch b.Account.Type {
		case postings.AccountCardAvailable:
			key = b.Account.Card + "|" + b.Account.Currency
		case postings.AccountCardHeld:
			key = "HELD:" + b.Account.Card + "|" + b.Account.Currency
		case postings.AccountCardReceivable:
			key = "RECEIVABLE:" + b.Account.Card + "|" + b.Account.Currency
		}
		if last[key] != b.Balance {
			t.Errorf("%s: last balanceAfter %d, balance %d", key, last[key], b.Balance)
		}
	}
	if !reflect.DeepEqual(sums, want) {
		t.Errorf("bill sums %v, balances %v", sums, want)
	}
	for _, typ := range []string{"DEPOSIT", "CARD_FUND", "CARD_TRANSFER_IN", "CARD_TRANSFER_OUT", "CARD_AUTH", "CARD_SETTLE"} {
		if !types[typ] {
			t.Errorf("the workload made no %s line", typ)
		}
	}
	for _, op := range []string{"transfer IN across currencies", "transfer OUT across currencies", "clear", "cancel"} {
		if counted[op] == 0 {
			t.Errorf("the workload made no %s", op)
		}
	}

	// The CSV of the whole range: a header and the same rows.
	h, recs := s.billCSV(sh, billPath(today, today))
	if ct := h.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := h.Get("Content-Disposition"); cd != fmt.Sprintf(`attachment; filename=bill_%s_%s_%s.csv`, sh.creds.ShopNo, today, today) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if h.Get("X-Total-Count") != fmt.Sprint(len(lines)) {
		t.Errorf("X-Total-Count %q", h.Get("X-Total-Count"))
	}
	if len(recs) != len(lines)+1 || strings.Join(recs[0], ",") != "billId,type,amount,currency,ts,account,cardNo,txId,authId,balanceAfter,seq,billSeq,accountType,relatedTo" {
		t.Fatalf("CSV has %d records for %d lines; header %v", len(recs), len(lines), recs[0])
	}
	for i, b := range lines {
		if !reflect.DeepEqual(recs[i+1], b.csvRecord()) {
			t.Fatalf("CSV row %d\n got %v\nwant %v", i+1, recs[i+1], b.csvRecord())
		}
	}
	// A page of the CSV is the same page of the JSON.
	h, recs = s.billCSV(sh, billPath(today, today, 3, 7))
	page := s.bill(sh, billPath(today, today, 3, 7))
	if len(recs) != 8 || len(page.List) != 7 || !strings.HasSuffix(h.Get("Content-Disposition"), "_p3_s7.csv") {
		t.Fatalf("CSV page: %d records, %s", len(recs), h.Get("Content-Disposition"))
	}
	for i, b := range page.List {
		if !reflect.DeepEqual(recs[i+1], b.csvRecord()) {
			t.Errorf("CSV page row %d\n got %v\nwant %v", i+1, recs[i+1], b.csvRecord())
		}
	}
}

// documentedBillTypes is the list of docs/api.md: every kind but
// REMIT_SETTLE, which moves no account of the merchant.
var documentedBillTypes = map[string]bool{
	"DEPOSIT": true, "CARD_FUND": true, "CARD_TRANSFER_IN": true, "CARD_TRANSFER_OUT": true,
	"CARD_CANCEL_REFUND": true, "CARD_AUTH": true, "CARD_AUTH_RELEASE": true, "CARD_SETTLE": true,
	"CARD_REFUND": true, "REVERSAL": true, "REMIT_OUT": true, "REMIT_RETURN": true, "FEE": true,
	"FEE_REFUND": true, "FX": true, "ADJUSTMENT": true,
	// The types only bill lines have (postings.BillTypes).
	"RECEIVABLE": true, "RECEIVABLE_RECOVERY": true,
}

func TestBillTypesAreTheKinds(t *testing.T) {
	t.Parallel()
	for _, k := range postings.BillTypes() {
		if documentedBillTypes[string(k)] == (k == postings.KindRemitSettle) {
			t.Errorf("kind %s: documented %v", k, documentedBillTypes[string(k)])
		}
	}
	if len(documentedBillTypes) != len(postings.BillTypes())-1 {
		t.Errorf("%d documented types for %d bill types", len(documentedBillTypes), len(postings.BillTypes()))
	}
}

// 20 writers make card transfers for one merchant while a reader pages
// through the merchant's bill of today, 7 lines a page: the pages
// concatenate to exactly the lines present when the first page was read,
// followed only by newer ones, with no duplicate and no gap; a page, once
// full, never changes, and a short last page only grows at its end.
func TestBillStableUnderConcurrentWriters(t *testing.T) {
	// Not parallel: it pages the bill under concurrent writers; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	now, today := todayClock()
	// The reader re-reads short pages quickly: no rate limit.
	s := newTestServer(t, serverOptions{ledgerNow: now, rateLimit: RateLimit{RPS: -1}})
	ctx := context.Background()
	l := s.l
	for _, pair := range [][3]string{{"USD", "EUR", "0.91"}, {"EUR", "USD", "1.09"}} {
		if _, err := l.FX.Set(ctx, pair[0], pair[1], pair[2], 40); err != nil {
			t.Fatal(err)
		}
	}
	sh := s.fundedShop()
	s.deposit(sh, "USD", 100_000_00)
	s.deposit(sh, "EUR", 100_000_00)
	const writers, perWriter, size = 20, 40, 7
	issued := make([]*cards.Card, writers)
	for i := range issued {
		cur, bin := "USD", "453201"
		if i%2 == 1 {
			cur, bin = "EUR", "522302"
		}
		k, err := l.Cards.CreateCard(ctx, sh.m.ID, cards.CreateCardInput{Bin: bin, Currency: cur, Amount: 100_00}, nil)
		if err != nil {
			t.Fatal(err)
		}
		issued[i] = k
	}

	var (
		wg      sync.WaitGroup
		written atomic.Int64
		done    = make(chan struct{})
	)
	for i, k := range issued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perWriter; j++ {
				cur := k.Currency
				if j%3 == 2 { // every third transfer crosses currencies
					cur = map[string]string{"USD": "EUR", "EUR": "USD"}[cur]
				}
				dir := []string{cards.DirectionIn, cards.DirectionOut}[j%2]
				if _, err := l.Cards.Transfer(ctx, sh.m.ID, cards.TransferInput{CardNo: k.CardNo, Amount: 1_00, Currency: cur, Direction: dir}, nil); err != nil {
					t.Errorf("writer %d: %v", i, err)
					return
				}
				written.Add(1)
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	finished := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	for written.Load() < writers { // the writers are under way
		time.Sleep(time.Millisecond)
	}

	// What is there now, read straight from the ledger, then page 1.
	from, _ := time.Parse("2006-01-02", today)
	var before []bill.Line
	for page := 1; ; page++ {
		p, err := l.Bills.Bill(ctx, sh.m.ID, from, from.AddDate(0, 0, 1), page, bill.PageMax)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, p.Lines...)
		if len(p.Lines) < bill.PageMax {
			break
		}
	}
	var (
		got      []billLineOut
		first    = s.bill(sh, billPath(today, today, 1, size))
		total0   = first.Total
		lastTot  = total0
		cur      = first
		page     = 1
		regrowth int // short pages read again
	)
	if total0 < int64(len(before)) {
		t.Fatalf("page 1 total %d, but %d lines were there before it", total0, len(before))
	}
	for {
		final := finished() // before the read: a short page read after the end is the end
		if page > 1 || regrowth > 0 {
			prev := cur
			cur = s.bill(sh, billPath(today, today, page, size))
			if regrowth > 0 && (len(cur.List) < len(prev.List) || !reflect.DeepEqual(cur.List[:len(prev.List)], prev.List)) {
				t.Fatalf("page %d changed while it grew:\n%+v\n%+v", page, prev.List, cur.List)
			}
		}
		if cur.Total < lastTot {
			t.Fatalf("total went down from %d to %d", lastTot, cur.Total)
		}
		lastTot = cur.Total
		if len(cur.List) == size {
			got = append(got, cur.List...)
			page++
			regrowth = 0
			continue
		}
		if final {
			got = append(got, cur.List...)
			break
		}
		regrowth++
		time.Sleep(2 * time.Millisecond)
	}
	if t.Failed() {
		return
	}

	// No gap, no duplicate: billSeq runs on from the first line of the day.
	for i := range got {
		if got[i].BillSeq != got[0].BillSeq+int64(i) {
			t.Fatalf("line %d has billSeq %d after %d", i, got[i].BillSeq, got[i-1].BillSeq)
		}
	}
	if len(before) == 0 || got[0].BillSeq != before[0].BillSeq {
		t.Fatalf("first line %d, ledger's first %v", got[0].BillSeq, before)
	}
	// The lines there when page 1 was read come first, as they were.
	for i, b := range before {
		g := got[i]
		if g.BillSeq != b.BillSeq || g.Seq != b.MerchantSeq || g.Type != string(b.Kind) || g.Currency != b.Currency ||
			g.Amount.String() != postings.FormatMinor(b.Amount, postings.MustCurrency(b.Currency)) {
			t.Fatalf("line %d: paged %+v, present before %+v", i, g, b)
		}
	}
	// Then only newer lines, up to the last one written.
	want := s.billAll(sh, today, today)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("paged %d lines, the bill has %d", len(got), len(want))
	}
	if int64(len(got)) <= total0 {
		t.Errorf("no line arrived while paging (%d at page 1, %d in the end): the test did not race", total0, len(got))
	}
	if w := written.Load(); w != writers*perWriter {
		t.Errorf("%d transfers written", w)
	}
	t.Logf("%d lines at page 1, %d at the end, %d pages", total0, len(got), page)
}
