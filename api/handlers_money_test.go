package api

// The bill and remittance routes' handlers against fakes (fakes_test.go).

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/postings"
)

func TestHandleBillList(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	q := "?startDate=2026-03-01&endDate=2026-03-02"
	cases := []handlerCase{
		// The days are whole: endDate's included, to the next midnight.
		{name: "paged", query: q + "&page=2&size=50", call: "Bill", in: [4]any{day(1), day(3), 2, 50}, data: `{"total":0,"list":[]}`},
		{name: "default page", query: q, call: "Bill", in: [4]any{day(1), day(3), 1, billSizeDefault}},
		{name: "no startDate", query: "?endDate=2026-03-02", field: "startDate"},
		{name: "no endDate", query: "?startDate=2026-03-02", field: "endDate"},
		{name: "bad date", query: "?startDate=2026-3-1&endDate=2026-03-02", field: "startDate"},
		{name: "no such day", query: "?startDate=2026-02-29&endDate=2026-03-02", field: "startDate"},
		{name: "reversed", query: "?startDate=2026-03-02&endDate=2026-03-01", field: "endDate",
			message: "endDate: must not be before startDate"},
		{name: "range too long", query: "?startDate=2020-01-01&endDate=2026-03-01", field: "endDate"},
		{name: "page 0", query: q + "&page=0", field: "page"},
		{name: "size 0", query: q + "&size=0", field: "size"},
		{name: "size huge", query: q + "&size=100000", field: "size"},
		{name: "page twice", query: q + "&page=1&page=2", field: "page"},
		{name: "bad type", query: q + "&type=NOPE", field: "type"},
		{name: "bad filter card", query: q + "&cardNo=a%20b", field: "cardNo"},
		{name: "bad filter currency", query: q + "&currency=usd", field: "currency"},
	}
	runShopCases(t, http.MethodGet, "/shop/bill/list", withErrors(cases, handlerCase{query: q + "&page=1", call: "Bill"}))

	// A filter reads the range's matches (an unknown card is an empty
	// bill, not a refusal: docs/api.md).
	runShopCases(t, http.MethodGet, "/shop/bill/list", []handlerCase{
		{name: "filtered", query: q + "&page=1&cardNo=crd_other", call: "BillRange,FilteredBill", data: `{"total":0,"list":[]}`,
			in: bill.Filter{CardNo: "crd_other"}},
	})
}

func TestHandleRemittanceCreate(t *testing.T) {
	t.Parallel()
	ok := remitBody(benDE, `"100.00"`, "EUR", `,"purpose":"SUPP"`)
	cases := []handlerCase{
		// Decoded, the beneficiary normalised, the corridor's rail and fee
		// worked out (the rules' own tests hold the fees).
		{name: "created", body: ok, call: "CreateRemittance", in: remittance.RemittanceInput{PayerID: "payer-1",
			Beneficiary: json.RawMessage(`{"account_no":"DE89370400440532013000","bank_swift":"COBADEFFXXX","country":"DE","name":"Hans Muster GmbH"}`),
			Amount:      10000, Fee: 55, Currency: "EUR", Purpose: "SUPP", Rail: "SEPA",
			// The fee's rule, which the FEE entry records (docs/audit.md).
			FeeFact: &postings.FeeFact{Rule: "remittance", RuleVersion: "corridor:DE:EUR", Basis: 10000, Bps: 5, Fixed: 50, Amount: 55}}, data: `{"txId":"rmt_new","status":"SCREENING","amount":100.00,` +
			`"currency":"EUR","fee":1.50,"rail":"SEPA","purpose":"","createdAt":"2026-03-01T10:00:00Z"}`},
		{name: "bad JSON", body: `{"payer_id":`, field: "body"},
		{name: "fields missing", body: `{"payer_id":"p"}`, field: "beneficiary, amount, currency"},
		{name: "beneficiary not an object", body: remitBody(`"Hans"`, `1`, "EUR", ""), field: "beneficiary"},
		{name: "beneficiary member twice", body: remitBody(`{"name":"x","name":"y"}`, `1`, "EUR", ""), field: "beneficiary.name"},
		{name: "bad currency", body: remitBody(benDE, `1`, "EURO", ""), field: "currency"},
		{name: "zero amount", body: remitBody(benDE, `0`, "EUR", ""), field: "amount"},
		{name: "too many decimals", body: remitBody(benDE, `"1.001"`, "EUR", ""), field: "amount"},
		{name: "callback loopback", body: remitBody(benDE, `1`, "EUR", `,"callback_url":"http://[::1]:0/cb"`), field: "callback_url"},
		{name: "unknown field", body: remitBody(benDE, `1`, "EUR", `,"fee":0`), field: "fee"},
	}
	runShopCases(t, http.MethodPost, "/shop/remittance/create", withErrors(cases, handlerCase{body: ok, call: "CreateRemittance"},
		mapCurrency, mapLimit, mapInsufficient, mapIdemMismatch, mapIdemRace))
}

func TestHandleRemittanceQuery(t *testing.T) {
	t.Parallel()
	cases := []handlerCase{
		// The beneficiary's account is masked in every answer.
		{name: "found", query: "?txId=rmt_1", call: "Remittance", in: "rmt_1", data: `{"txId":"rmt_1","status":"SCREENING",` +
			`"amount":100.00,"currency":"EUR","fee":1.50,"rail":"SEPA","purpose":"","payerId":"payer-1",` +
			`"beneficiary":{"name":"Erika Mustermann","country":"DE","account_no":"****3000"},"createdAt":"2026-03-01T10:00:00Z","history":[]}`},
		{name: "no txId", field: "txId", message: "txId: query parameter is required"},
		{name: "empty txId", query: "?txId=", field: "txId"},
	}
	runShopCases(t, http.MethodGet, "/shop/remittance/query", withErrors(cases, handlerCase{query: "?txId=rmt_1", call: "Remittance"},
		mapRemitNotFound))
}

// The dynamic fields are the rules' own (no service): their refusals.
func TestHandleRemittanceDynamicFields(t *testing.T) {
	t.Parallel()
	runShopCases(t, http.MethodGet, "/shop/remittance/dynamic-fields", []handlerCase{
		{name: "DE in EUR", query: "?country=DE&currency=EUR"},
		{name: "no country", query: "?currency=EUR", field: "country"},
		{name: "no currency", query: "?country=DE", field: "currency"},
		{name: "bad currency", query: "?country=DE&currency=eur", field: "currency"},
		{name: "bad country", query: "?country=ZZ&currency=EUR", field: "country"},
	})
}

// The bill as CSV (Accept: text/csv): unpaged, it reads the range and
// streams it; a failure before the answer starts is still the envelope.
func TestHandleBillCSV(t *testing.T) {
	t.Parallel()
	g := newFakeGateway(t)
	req := httptest.NewRequest(http.MethodGet, "/shop/bill/list?startDate=2026-03-01&endDate=2026-03-02", nil)
	req.Header.Set(headerShopNo, fakeShopNo)
	req.Header.Set(headerPublicKey, fakePublicKey)
	req.Header.Set("Accept", "text/csv")
	w := httptest.NewRecorder()
	g.shop.ServeHTTP(w, req)
	var called []string
	for _, c := range g.f.recorded() {
		called = append(called, c.method)
	}
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" ||
		w.Header().Get("X-Total-Count") != "0" || strings.Join(called, ",") != "BillRange,BillStream" ||
		!strings.HasPrefix(w.Body.String(), strings.Join(billCSVHeader, ",")+"\n") {
		t.Errorf("CSV: %d %v calls %v\n%s", w.Code, w.Header(), called, w.Body)
	}
	if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename=bill_SH0000000001_2026-03-01_2026-03-02.csv` {
		t.Errorf("Content-Disposition %q", cd)
	}

	g = newFakeGateway(t)
	g.f.err = mapUnavailable.err
	req.Header.Set("Accept", "text/csv")
	a := g.serve(g.shop, req.Clone(req.Context()))
	checkCase(t, handlerCase{status: 503, code: 503, message: messageUnavailable, call: "BillRange"}, a, g.f.recorded())
}
