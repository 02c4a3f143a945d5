package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// Every money figure of the exports is exact, read back from the real
// server over HTTPS with decimal arithmetic (apd, no float): the bill's CSV
// summed per currency and account equals the balance report's CSV closing
// for funding and cards, every report row adds up, the totals file is the
// report's rows summed, and the report closes at the ledger's balances, in
// USD, EUR, JPY (no decimals) and KWD (three). The bill's ts and the
// report's period are ISO 8601 with an offset.
func TestExportsAreExact(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{Currencies: []string{"USD", "EUR", "JPY", "KWD"}})
	s.deposit(sh, "USD", 100_001)
	s.deposit(sh, "EUR", 50_050)
	s.deposit(sh, "JPY", 123_457)
	s.deposit(sh, "KWD", 7_125)
	s.deposit(sh, "KWD", 1)
	usd := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"12.34"}`)
	eur := s.createCard(sh, `{"bin":"453202","currency":"EUR","amount":"0.01"}`)
	for _, body := range []string{
		`{"cardNo":"` + usd.CardNo + `","amount":"5.55","currency":"USD","direction":"IN"}`,
		`{"cardNo":"` + usd.CardNo + `","amount":"0.07","currency":"USD","direction":"OUT"}`,
		`{"cardNo":"` + eur.CardNo + `","amount":"3.33","currency":"EUR","direction":"IN"}`,
	} {
		s.request(&sh, "POST", "/shop/card/transfer", body).must(t, 200, 200)
	}
	now := time.Now().UTC()
	days := "startDate=" + now.AddDate(0, 0, -1).Format(time.DateOnly) + "&endDate=" + now.AddDate(0, 0, 1).Format(time.DateOnly)

	// The bill's CSV, the whole range, summed per currency and account.
	billCSV := s.csv(t, sh, "/shop/bill/list?"+days)
	h := billCSV[0]
	billSum := map[[2]string]*apd.Decimal{}
	for _, r := range billCSV[1:] {
		if _, err := time.Parse(time.RFC3339, r[slices.Index(h, "ts")]); err != nil {
			t.Errorf("bill ts %q is not ISO 8601 with an offset", r[slices.Index(h, "ts")])
		}
		class := "card"
		if r[slices.Index(h, "account")] == "FUNDING" {
			class = "funding"
		}
		k := [2]string{r[slices.Index(h, "currency")], class}
		billSum[k] = decAdd(t, billSum[k], r[slices.Index(h, "amount")])
	}

	// The report over the same days (UTC): it starts before any movement.
	rep := s.csv(t, sh, "/shop/reports/balance?"+days)
	tot := s.csv(t, sh, "/shop/reports/balance/totals?"+days)
	rh, th := rep[0], tot[0]
	balances := s.balancesByClass(t, sh.m.ID)
	sums := map[string]map[string]*apd.Decimal{}
	for _, r := range rep[1:] {
		cur, class := r[slices.Index(rh, "currency")], r[slices.Index(rh, "accountClass")]
		if _, err := time.Parse(time.RFC3339, r[slices.Index(rh, "periodStart")]); err != nil {
			t.Errorf("periodStart %q: %v", r[slices.Index(rh, "periodStart")], err)
		}
		flow := decAdd(t, nil, r[slices.Index(rh, "opening")])
		for _, c := range rh[slices.Index(rh, "opening")+1 : slices.Index(rh, "closing")] {
			flow = decAdd(t, flow, r[slices.Index(rh, c)])
		}
		closing := decAdd(t, nil, r[slices.Index(rh, "closing")])
		if flow.Cmp(closing) != 0 {
			t.Errorf("%s %s: opening + categories %s ≠ closing %s", cur, class, flow, closing)
		}
		if b := billSum[[2]string{cur, class}]; (class == "funding" || class == "card") && (b == nil && !closing.IsZero() || b != nil && b.Cmp(closing) != 0) {
			t.Errorf("%s %s: the bill's CSV sums to %v, the report closes at %s", cur, class, b, closing)
		}
		cu, _ := postings.LookupCurrency(cur)
		if want := apd.New(balances[[2]string{cur, class}], -cu.Exponent); want.Cmp(closing) != 0 {
			t.Errorf("%s %s: closing %s, the ledger's balance %s", cur, class, closing, want)
		}
		if sums[cur] == nil {
			sums[cur] = map[string]*apd.Decimal{}
		}
		for _, c := range rh[slices.Index(rh, "opening") : slices.Index(rh, "closing")+1] {
			sums[cur][c] = decAdd(t, sums[cur][c], r[slices.Index(rh, c)])
		}
	}
	if len(rep) != 1+4*4 || len(tot) != 1+4 {
		t.Fatalf("%d report rows, %d totals rows; want 16 and 4", len(rep)-1, len(tot)-1)
	}
	for _, r := range tot[1:] {
		cur := r[slices.Index(th, "currency")]
		for c, want := range sums[cur] {
			if got := decAdd(t, nil, r[slices.Index(th, c)]); got.Cmp(want) != 0 {
				t.Errorf("%s %s: totals %s, the rows sum to %s", cur, c, got, want)
			}
		}
	}
	if got := sums["JPY"]["deposits"]; got == nil || got.String() != "123457" {
		t.Errorf("JPY deposits %v, want 123457", got)
	}
	if got := sums["KWD"]["closing"]; got == nil || got.String() != "7.126" {
		t.Errorf("KWD closing %v, want 7.126", got)
	}
}

// decAdd is a + the decimal s, exactly (a nil a is zero).
func decAdd(t *testing.T, a *apd.Decimal, s string) *apd.Decimal {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatalf("%q is not a decimal: %v", s, err)
	}
	if a == nil {
		return d
	}
	var out apd.Decimal
	if _, err := apd.BaseContext.WithPrecision(34).Add(&out, a, d); err != nil {
		t.Fatal(err)
	}
	return &out
}

// csv GETs path as CSV and parses it.
func (s *testServer) csv(t *testing.T, sh shop, path string) [][]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Shop-No", sh.creds.ShopNo)
	req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	req.Header.Set("Accept", "text/csv")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, b)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// balancesByClass is the merchant's balances from the ledger, by currency
// and report class.
func (s *testServer) balancesByClass(t *testing.T, m int64) map[[2]string]int64 {
	t.Helper()
	var rows []struct {
		Type     string `bun:"type"`
		Currency string `bun:"currency"`
		Balance  int64  `bun:"balance"`
	}
	err := s.l.DB().NewRaw(`select a.type, a.currency, coalesce(sum(b.balance), 0)::bigint as balance
		from accounts a join balances b on b.account_id = a.id
		where a.merchant_id = ? group by a.type, a.currency`, m).Scan(context.Background(), &rows)
	if err != nil {
		t.Fatal(err)
	}
	class := map[string]string{"funding": "funding", "card_available": "card", "card_held": "held", "card_receivable": "receivable"}
	out := map[[2]string]int64{}
	for _, r := range rows {
		if c, ok := class[r.Type]; ok {
			out[[2]string{r.Currency, c}] += r.Balance
		}
	}
	return out
}
