package api

// The internal network API's handlers against fakes (fakes_test.go): the
// card processor's messages and the rail partners' reports
// (docs/network.md), each idempotent on its messageId in the services.

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paygate/gateway/internal/network"
)

func TestHandleInternalToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		auth    bool
		headers []string
	}{
		{"none", false, nil},
		{"wrong", false, []string{"Authorization", "Bearer tok_wrong_0123456789abcdef"}},
		{"not bearer", false, []string{"Authorization", "Basic " + fakeInternalToken}},
		{"twice", true, []string{"Authorization", "Bearer " + fakeInternalToken}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGateway(t)
			a := g.internalRequest(tc.auth, http.MethodGet, "/network/authorizations/auth_1", "", tc.headers...)
			checkCase(t, handlerCase{status: 401, message: messageBadToken}, a, g.f.recorded())
			if a.header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
	// /healthz needs no token (and is no envelope); unknown paths are the
	// envelope's 404.
	g := newFakeGateway(t)
	w := httptest.NewRecorder()
	g.internal.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if w.Code != http.StatusOK {
		t.Errorf("/healthz without a token: %d %s", w.Code, w.Body)
	}
	checkCase(t, handlerCase{status: 404}, g.internalRequest(true, http.MethodGet, "/network/nothing", ""), nil)
	checkCase(t, handlerCase{status: 405}, g.internalRequest(true, http.MethodGet, "/network/authorize", ""), nil)
}

func TestHandleNetworkAuthorize(t *testing.T) {
	t.Parallel()
	ok := `{"messageId":"msg_1","cardNo":"crd_1","amount":"12.34","currency":"USD","merchantName":"Coffee","mcc":"5814","merchantCountry":"DE"}`
	cases := []handlerCase{
		{name: "approved", body: ok, call: "Authorize", in: network.AuthRequest{MessageID: "msg_1", CardNo: "crd_1", Amount: 1234,
			Currency: "USD", MerchantName: "Coffee", MCC: "5814", MerchantCountry: "DE"},
			data: `{"authId":"auth_1","approved":true,"code":"00","reason":"approved","cardNo":"crd_1","amount":12.34,"currency":"USD",` +
				`"cardAmount":null,"fee":null,"cardCurrency":null,"fxRate":null,"available":null,"createdAt":"2026-03-01T10:00:00Z"}`},
		{name: "bad JSON", body: `{"messageId":`, field: "body"},
		{name: "no messageId", body: `{"cardNo":"crd_1","amount":1,"currency":"USD"}`, field: "messageId"},
		{name: "bad messageId", body: `{"messageId":"m 1","cardNo":"crd_1","amount":1,"currency":"USD"}`, field: "messageId"},
		{name: "bad cardNo", body: `{"messageId":"m1","cardNo":"","amount":1,"currency":"USD"}`, field: "cardNo"},
		{name: "zero amount", body: `{"messageId":"m1","cardNo":"crd_1","amount":0,"currency":"USD"}`, field: "amount"},
		{name: "bad currency", body: `{"messageId":"m1","cardNo":"crd_1","amount":1,"currency":"usd"}`, field: "currency"},
		{name: "bad mcc", body: `{"messageId":"m1","cardNo":"crd_1","amount":1,"currency":"USD","mcc":"58"}`, field: "mcc"},
		{name: "bad country", body: `{"messageId":"m1","cardNo":"crd_1","amount":1,"currency":"USD","merchantCountry":"de"}`, field: "merchantCountry"},
	}
	runInternalCases(t, http.MethodPost, "/network/authorize", withErrors(cases, handlerCase{body: ok, call: "Authorize"},
		mapCardNotFound, mapLimit, mapMessageID))
}

func TestHandleNetworkHolds(t *testing.T) {
	t.Parallel()
	hold := func(status string) string {
		return `{"authId":"auth_1","cardNo":"crd_1","status":"` + status + `","currency":"USD","captured":0.00,"fee":0.00,` +
			`"released":0.00,"receivable":0.00,"held":0.00,"available":0.00,"createdAt":"2026-03-01T10:00:00Z"}`
	}
	// The amount is in the authorization's currency, read first.
	clear := `{"messageId":"msg_2","authId":"auth_1","amount":"10.50"}`
	clears := []handlerCase{
		{name: "cleared", body: clear, call: "Authorization,Clear", in: network.ClearRequest{MessageID: "msg_2", AuthID: "auth_1", Amount: 1050},
			data: hold("CLEARED")},
		{name: "no amount", body: `{"messageId":"msg_2","authId":"auth_1"}`, field: "amount"},
		{name: "bad authId", body: `{"messageId":"msg_2","authId":"a b","amount":1}`, field: "authId"},
		{name: "too many decimals for the authorization", body: `{"messageId":"msg_2","authId":"auth_1","amount":"1.001"}`,
			call: "Authorization", field: "amount"},
		{name: "unknown authorization", body: clear, errOn: "Authorization", err: mapAuthNotFound.err, code: codeAuthNotFound,
			message: mapAuthNotFound.message, call: "Authorization"},
	}
	runInternalCases(t, http.MethodPost, "/network/clear", withErrors(clears, handlerCase{body: clear, errOn: "Clear", call: "Authorization,Clear"},
		mapAuthNotFound, mapAuthClosed, mapLimit, mapMessageID))

	reverse := `{"messageId":"msg_3","authId":"auth_1"}`
	reverses := []handlerCase{
		{name: "whole", body: reverse, call: "Reverse", in: network.ReverseRequest{MessageID: "msg_3", AuthID: "auth_1"}, data: hold("REVERSED")},
		{name: "partial", body: `{"messageId":"msg_3","authId":"auth_1","amount":2}`, call: "Authorization,Reverse",
			in: network.ReverseRequest{MessageID: "msg_3", AuthID: "auth_1", Amount: 200}},
		{name: "no authId", body: `{"messageId":"msg_3"}`, field: "authId"},
	}
	runInternalCases(t, http.MethodPost, "/network/reverse", withErrors(reverses, handlerCase{body: reverse, call: "Reverse"},
		mapAuthNotFound, mapAuthClosed, mapMessageID))
}

// The attempts' default limit is 100 (docs/openapi-internal.yaml).
func TestHandleNetworkRefundAndReads(t *testing.T) {
	t.Parallel()
	ok := `{"messageId":"msg_4","cardNo":"crd_1","amount":5,"currency":"USD"}`
	runInternalCases(t, http.MethodPost, "/network/refund", withErrors([]handlerCase{
		{name: "refunded", body: ok, call: "Refund", in: network.RefundRequest{MessageID: "msg_4", CardNo: "crd_1", Amount: 500, Currency: "USD"}},
		{name: "fields missing", body: `{"messageId":"msg_4"}`, field: "cardNo, amount, currency"},
		{name: "negative", body: `{"messageId":"msg_4","cardNo":"crd_1","amount":-5,"currency":"USD"}`, field: "amount"},
	}, handlerCase{body: ok, call: "Refund"}, mapCardNotFound, mapLimit, mapMessageID))

	runInternalCases(t, http.MethodGet, "/network/authorizations/auth_1", withErrors([]handlerCase{
		{name: "read", call: "Authorization", in: "auth_1"},
	}, handlerCase{call: "Authorization"}, mapAuthNotFound))

	runInternalCases(t, http.MethodGet, "/network/authorizations", withErrors([]handlerCase{
		{name: "default limit", query: "?cardNo=crd_1", call: "AuthAttempts", in: [2]any{"crd_1", 100}, data: `{"list":[]}`},
		{name: "limit", query: "?cardNo=crd_1&limit=3", call: "AuthAttempts", in: [2]any{"crd_1", 3}},
		{name: "no cardNo", field: "cardNo"},
		{name: "limit 0", query: "?cardNo=crd_1&limit=0", field: "limit"},
		{name: "limit not a number", query: "?cardNo=crd_1&limit=x", field: "limit"},
	}, handlerCase{query: "?cardNo=crd_1", call: "AuthAttempts"}, mapCardNotFound))
}

func TestHandleRailReport(t *testing.T) {
	t.Parallel()
	ok := `{"messageId":"msg_5","txId":"rmt_1","status":"RETURNED","reason":"AC01"}`
	cases := []handlerCase{
		{name: "returned", body: ok, call: "ReportRemittance", in: [4]string{"msg_5", "rmt_1", "RETURNED", "AC01"}},
		{name: "settled", body: `{"messageId":"msg_5","txId":"rmt_1","status":"SETTLED"}`, call: "ReportRemittance",
			in: [4]string{"msg_5", "rmt_1", "SETTLED", ""}},
		{name: "bad status", body: `{"messageId":"msg_5","txId":"rmt_1","status":"LOST"}`, field: "status"},
		{name: "returned without a reason", body: `{"messageId":"msg_5","txId":"rmt_1","status":"RETURNED"}`, field: "reason"},
		{name: "settled with a reason", body: `{"messageId":"msg_5","txId":"rmt_1","status":"SETTLED","reason":"AC01"}`, field: "reason"},
		{name: "bad reason", body: `{"messageId":"msg_5","txId":"rmt_1","status":"RETURNED","reason":"because"}`, field: "reason"},
		{name: "bad txId", body: `{"messageId":"msg_5","txId":"","status":"SETTLED"}`, field: "txId"},
	}
	runInternalCases(t, http.MethodPost, "/rail/report", withErrors(cases, handlerCase{body: ok, call: "ReportRemittance"},
		mapRemitNotFound, mapMessageID))
}
