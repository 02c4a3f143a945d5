package api

// The card routes' handlers against fakes (fakes_test.go): what each
// decodes and passes on, what it answers, every refusal.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
)

// fakeCardJSON is views.NewCard of fakeCard, as the envelope carries it.
func fakeCardJSON(cardNo string) string {
	return `{"cardNo":"` + cardNo + `","last4":"4242","status":"ACTIVE","balance":50.00,"held":2.50,"receivable":0.00,` +
		`"currency":"USD","createdAt":"2026-03-01T10:00:00Z","bin":"453201","cardNetwork":"VISA","expiry":"03/29",` +
		`"panRef":"pan_1","remark":""}`
}

func TestHandleAccountAndBINs(t *testing.T) {
	t.Parallel()
	runShopCases(t, http.MethodGet, "/shop/account", withErrors([]handlerCase{
		{name: "profile", call: "Profile", data: `{"shopNo":"SH0000000001","name":"Fake shop","status":"ACTIVE","kybTier":"STANDARD",` +
			`"currencies":["USD","JPY"],"balances":[{"currency":"USD","balance":123.45},{"currency":"JPY","balance":500}],` +
			`"receivables":[{"currency":"USD","amount":0.00}],"limits":[],"lastAuthenticatedAt":"2026-03-01T10:00:00Z",` +
			`"createdAt":"2026-03-01T10:00:00Z"}`},
	}, handlerCase{call: "Profile"}))
	runShopCases(t, http.MethodGet, "/shop/card/bin/list", withErrors([]handlerCase{
		{name: "BINs, VIRTUAL when the type is unset", call: "MerchantBINs", data: `[` +
			`{"bin":"453201","cardNetwork":"VISA","brand":"VISA","currency":"USD","type":"VIRTUAL"},` +
			`{"bin":"522222","cardNetwork":"MASTERCARD","brand":"MASTERCARD","currency":"EUR","type":"VIRTUAL"}]`},
	}, handlerCase{call: "MerchantBINs"}))
}

func TestHandleCardCreate(t *testing.T) {
	t.Parallel()
	ok := `{"bin":"453201","currency":"USD","amount":"100.50","remark":"gift","callback_url":"https://merchant.example.com/cards"}`
	cases := []handlerCase{
		{name: "created", body: ok, call: "CreateCard", data: fakeCardJSON("crd_new"),
			in: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10050, Remark: "gift",
				CallbackURL: "https://merchant.example.com/cards"}},
		{name: "integer amount, no options", body: `{"bin":"45320199","currency":"JPY","amount":500}`, call: "CreateCard",
			in: cards.CreateCardInput{Bin: "45320199", Currency: "JPY", Amount: 500}},
		{name: "zero amount", body: `{"bin":"453201","currency":"USD","amount":0}`, call: "CreateCard",
			in: cards.CreateCardInput{Bin: "453201", Currency: "USD"}},
		{name: "no body", field: "body", message: "body: is required: a JSON object"},
		{name: "bad JSON", body: `{"bin":`, field: "body", message: "body: is not valid JSON (unexpected end)"},
		{name: "not an object", body: `["453201"]`, field: "body"},
		{name: "unknown field", body: `{"bin":"453201","currency":"USD","amount":1,"pan":"4242"}`, field: "pan"},
		{name: "fields missing", body: `{}`, field: "bin, currency, amount", message: "bin, currency, amount: are required"},
		{name: "bin short", body: `{"bin":"4532","currency":"USD","amount":1}`, field: "bin"},
		{name: "bin a number", body: `{"bin":453201,"currency":"USD","amount":1}`, field: "bin"},
		{name: "currency lower case", body: `{"bin":"453201","currency":"usd","amount":1}`, field: "currency"},
		{name: "currency unknown", body: `{"bin":"453201","currency":"XYZ","amount":1}`, field: "currency"},
		{name: "amount negative", body: `{"bin":"453201","currency":"USD","amount":-1}`, field: "amount"},
		{name: "amount decimals", body: `{"bin":"453201","currency":"JPY","amount":1.5}`, field: "amount"},
		{name: "amount a bool", body: `{"bin":"453201","currency":"USD","amount":true}`, field: "amount"},
		{name: "remark long", body: `{"bin":"453201","currency":"USD","amount":1,"remark":"` + strings.Repeat("r", 256) + `"}`, field: "remark"},
		{name: "callback loopback", body: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"http://127.0.0.1/cb"}`, field: "callback_url"},
	}
	runShopCases(t, http.MethodPost, "/shop/card/create", withErrors(cases, handlerCase{body: ok, call: "CreateCard"},
		mapBIN, mapCurrency, mapLimit, mapInsufficient, mapIdemMismatch, mapIdemRace))
}

func TestHandleCardReads(t *testing.T) {
	t.Parallel()
	refusals := []handlerCase{
		{name: "no cardNo", field: "cardNo", message: "cardNo: query parameter is required"},
		{name: "empty cardNo", query: "?cardNo=", field: "cardNo"},
		{name: "cardNo with a space", query: "?cardNo=crd%201", field: "cardNo"},
		{name: "cardNo too long", query: "?cardNo=" + strings.Repeat("c", 65), field: "cardNo"},
	}
	read := handlerCase{query: "?cardNo=crd_1", call: "Card", in: "crd_1"}
	info := append([]handlerCase{{name: "info", query: read.query, call: "Card", in: "crd_1", data: fakeCardJSON("crd_1")}}, refusals...)
	runShopCases(t, http.MethodGet, "/shop/card/info", withErrors(info, read, mapCardNotFound))
	balance := append([]handlerCase{{name: "balance", query: read.query, call: "Card", in: "crd_1",
		data: `{"cardNo":"crd_1","balance":50.00,"held":2.50,"currency":"USD"}`}}, refusals...)
	runShopCases(t, http.MethodGet, "/shop/card/balance", withErrors(balance, read, mapCardNotFound))
}

func TestHandleCardBalanceBatch(t *testing.T) {
	t.Parallel()
	ok := `{"cardNos":["crd_1","crd_unknown","crd_1"]}`
	cases := []handlerCase{
		// Each asked card once to the service, each answered in the order
		// asked; an unknown (or another merchant's) card is only not found.
		{name: "batch", body: ok, call: "Cards", in: []string{"crd_1", "crd_unknown"}, data: `{"list":[` +
			`{"cardNo":"crd_1","found":true,"balance":50.00,"held":2.50,"currency":"USD","status":"ACTIVE"},` +
			`{"cardNo":"crd_unknown","found":false},` +
			`{"cardNo":"crd_1","found":true,"balance":50.00,"held":2.50,"currency":"USD","status":"ACTIVE"}]}`},
		{name: "bad JSON", body: `{"cardNos":[`, field: "body"},
		{name: "no cardNos", body: `{}`, field: "cardNos", message: "cardNos: is required"},
		{name: "empty list", body: `{"cardNos":[]}`, field: "cardNos"},
		{name: "not a list", body: `{"cardNos":"crd_1"}`, field: "cardNos"},
		{name: "101 cards", body: `{"cardNos":["c"` + strings.Repeat(`,"c"`, cards.CardsMax) + `]}`, field: "cardNos"},
		{name: "a bad card number", body: `{"cardNos":["crd_1","bad card"]}`, field: "cardNos[1]"},
		// The read's key is held before anything is read: reused with
		// another request, it is refused.
		{name: "read key reused", body: ok, headers: []string{headerIdempotencyKey, "k1"},
			err: mapIdemMismatch.err, code: codeIdemConflict, message: mapIdemMismatch.message},
	}
	runShopCases(t, http.MethodPost, "/shop/card/balance/batch", withErrors(cases, handlerCase{body: ok, call: "Cards"}))
}

func TestHandleCardActions(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		path, call string
		in         any
		reason     bool
	}{
		{"/shop/card/freeze", "FreezeCard", [2]string{"crd_1", "lost"}, true},
		{"/shop/card/unfreeze", "UnfreezeCard", "crd_1", false},
		{"/shop/card/cancel", "CancelCard", "crd_1", false},
	} {
		t.Run(r.path, func(t *testing.T) {
			t.Parallel()
			body := `{"cardNo":"crd_1"}`
			if r.reason {
				body = `{"cardNo":"crd_1","reason":"lost"}`
			}
			cases := []handlerCase{
				{name: "done", body: body, call: r.call, in: r.in, data: "null"},
				{name: "bad JSON", body: `{"cardNo"`, field: "body"},
				{name: "no cardNo", body: `{}`, field: "cardNo", message: "cardNo: is required"},
				{name: "bad cardNo", body: `{"cardNo":"crd 1"}`, field: "cardNo"},
				{name: "cardNo a number", body: `{"cardNo":1}`, field: "cardNo"},
			}
			if r.reason {
				cases = append(cases,
					handlerCase{name: "no reason", body: `{"cardNo":"crd_1"}`, call: r.call, in: [2]string{"crd_1", ""}},
					handlerCase{name: "reason long", body: `{"cardNo":"crd_1","reason":"` + strings.Repeat("é", 256) + `"}`, field: "reason"},
					handlerCase{name: "reason with a control", body: `{"cardNo":"crd_1","reason":"a\u0007b"}`, field: "reason"})
			} else {
				cases = append(cases, handlerCase{name: "reason is no field here", body: `{"cardNo":"crd_1","reason":"x"}`, field: "reason"})
			}
			runShopCases(t, http.MethodPost, r.path, withErrors(cases, handlerCase{body: body, call: r.call},
				mapCardNotFound, mapCardFrozen, mapCardCancelled, mapIdemMismatch))
		})
	}
}

func TestHandleCardTransfer(t *testing.T) {
	t.Parallel()
	ok := `{"cardNo":"crd_1","amount":"10.00","currency":"USD","direction":"IN"}`
	cases := []handlerCase{
		// A cross-currency transfer says its rates (docs/api.md).
		{name: "transferred", body: ok, call: "Transfer",
			in: cards.TransferInput{CardNo: "crd_1", Amount: 1000, Currency: "USD", Direction: cards.DirectionIn},
			data: `{"txId":"tx_1","cardNo":"crd_1","direction":"IN","amount":10.00,"currency":"USD","cardAmount":1500,` +
				`"cardCurrency":"JPY","fxRate":150.00,"midRate":151.50,"spreadBps":100,"cardBalance":1500,"fundingBalance":90.00,` +
				`"createdAt":"2026-03-01T10:00:00Z"}`},
		{name: "out, a three-decimal currency", body: `{"cardNo":"crd_1","amount":1.005,"currency":"KWD","direction":"OUT"}`, call: "Transfer",
			in: cards.TransferInput{CardNo: "crd_1", Amount: 1005, Currency: "KWD", Direction: cards.DirectionOut}},
		{name: "bad JSON", body: `{"cardNo":"crd_1",}`, field: "body"},
		{name: "fields missing", body: `{"cardNo":"crd_1"}`, field: "amount, currency, direction"},
		{name: "bad cardNo", body: `{"cardNo":"","amount":1,"currency":"USD","direction":"IN"}`, field: "cardNo"},
		{name: "zero amount", body: `{"cardNo":"crd_1","amount":0,"currency":"USD","direction":"IN"}`, field: "amount"},
		{name: "negative amount", body: `{"cardNo":"crd_1","amount":-1,"currency":"USD","direction":"IN"}`, field: "amount"},
		{name: "too many decimals", body: `{"cardNo":"crd_1","amount":"1.001","currency":"USD","direction":"IN"}`, field: "amount"},
		{name: "bad currency", body: `{"cardNo":"crd_1","amount":1,"currency":"US","direction":"IN"}`, field: "currency"},
		{name: "bad direction", body: `{"cardNo":"crd_1","amount":1,"currency":"USD","direction":"in"}`, field: "direction",
			message: "direction: must be IN or OUT"},
	}
	runShopCases(t, http.MethodPost, "/shop/card/transfer", withErrors(cases, handlerCase{body: ok, call: "Transfer"},
		mapCardNotFound, mapCardFrozen, mapCardCancelled, mapCurrency, mapLimit, mapInsufficient, mapFXPair, mapFXStale, mapIdemMismatch))
}

func TestHandleCardList(t *testing.T) {
	t.Parallel()
	type listIn = struct {
		Filter     cards.CardFilter
		Page, Size int
	}
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	cases := []handlerCase{
		{name: "defaults", call: "ListCards", in: listIn{Page: 1, Size: billSizeDefault},
			data: `{"total":7,"list":[` + fakeCardJSON("crd_1") + `]}`},
		{name: "filtered, the last day whole", query: "?page=2&size=10&status=FROZEN&currency=EUR&createdFrom=2026-03-01&createdTo=2026-03-02",
			call: "ListCards", in: listIn{Filter: cards.CardFilter{Status: cards.CardFrozen, Currency: "EUR", CreatedFrom: day(1), CreatedTo: day(3)},
				Page: 2, Size: 10}},
		{name: "page 0", query: "?page=0", field: "page"},
		{name: "page not a number", query: "?page=x", field: "page"},
		{name: "size too big", query: "?size=1000000", field: "size"},
		{name: "bad status", query: "?status=active", field: "status", message: "status: must be ACTIVE, FROZEN or CANCELLED"},
		{name: "bad currency", query: "?currency=usd", field: "currency"},
		{name: "bad date", query: "?createdFrom=2026-02-30", field: "createdFrom"},
		{name: "dates reversed", query: "?createdFrom=2026-03-02&createdTo=2026-03-01", field: "createdTo"},
	}
	runShopCases(t, http.MethodGet, "/shop/card/list", withErrors(cases, handlerCase{call: "ListCards"}))
}
