package reconcile_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/paygate/gateway/api"
)

// The month's exports are read as a merchant's finance team reads them:
// from the real API on loopback, with the shop's credentials.

// server serves the month's gateway on a loopback port of its own (port
// 0), with the fixture's clock.
func (mo *month) server(t *testing.T) *httptest.Server {
	t.Helper()
	l := mo.l
	h := api.NewServer(api.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: mo.db,
		Merchants: l.Merchants, Accounts: l.Cards, Cards: l.Cards, ReadKeys: l.Ledger, Bills: l.Bills, Remittances: l.Remit,
		Stats: l.Ledger, WebhookSettings: l.Merchants, Webhooks: l.Deliveries, Keys: l.Merchants,
		Now: func() time.Time { return *mo.now.Load() }})
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// get answers a shop's GET, as JSON or (csv) as the CSV file.
func get(t *testing.T, srv *httptest.Server, sh *shopRec, path string, asCSV bool) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Shop-No", sh.creds.ShopNo)
	req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	if asCSV {
		req.Header.Set("Accept", "text/csv")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s, %v", path, resp.StatusCode, b, err)
	}
	return b
}

// billLine is a bill line of the JSON answer, amounts as their exact text.
type billLine struct {
	BillID       string      `json:"billId"`
	Type         string      `json:"type"`
	Amount       json.Number `json:"amount"`
	Currency     string      `json:"currency"`
	Account      string      `json:"account"`
	AccountType  string      `json:"accountType"`
	BalanceAfter json.Number `json:"balanceAfter"`
	Seq          int64       `json:"seq"`
	RelatedTo    int64       `json:"relatedTo"`
}

// billJSON reads every page of the shop's bill over the month.
func (mo *month) billJSON(t *testing.T, srv *httptest.Server, sh *shopRec) []billLine {
	t.Helper()
	var out []billLine
	for page := 1; ; page++ {
		var env struct {
			Data struct {
				Total int64      `json:"total"`
				List  []billLine `json:"list"`
			} `json:"data"`
		}
		dec := json.NewDecoder(bytes.NewReader(get(t, srv, sh, mo.billQuery()+"&size=500&page="+strconv.Itoa(page), false)))
		dec.UseNumber()
		if err := dec.Decode(&env); err != nil {
			t.Fatal(err)
		}
		out = append(out, env.Data.List...)
		if len(env.Data.List) == 0 || int64(len(out)) >= env.Data.Total {
			if int64(len(out)) != env.Data.Total {
				t.Fatalf("bill pages hold %d lines, total %d", len(out), env.Data.Total)
			}
			return out
		}
	}
}

func (mo *month) billQuery() string {
	return "/shop/bill/list?startDate=" + mo.start.Format(time.DateOnly) + "&endDate=" + mo.end.AddDate(0, 0, -1).Format(time.DateOnly)
}

// csvRecords reads a CSV answer as maps by the header's names.
func csvRecords(t *testing.T, b []byte) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV: %v (%d records)", err, len(recs))
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// dec reads an exact decimal; add sums into a decimal (nil: zero).
func dec(t *testing.T, s string) *apd.Decimal {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

func add(t *testing.T, sum *apd.Decimal, s string) *apd.Decimal {
	t.Helper()
	if sum == nil {
		sum = new(apd.Decimal)
	}
	if _, err := apd.BaseContext.WithPrecision(40).Add(sum, sum, dec(t, s)); err != nil {
		t.Fatal(err)
	}
	return sum
}
