package api

// The sandbox's handlers against fakes (fakes_test.go): a test merchant
// drives the internal API's commands on its own cards, authorizations and
// remittances only; another merchant's look exactly like unknown ones.

import (
	"net/http"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/ledger"
)

func TestHandleSandbox(t *testing.T) {
	t.Parallel()
	key := []string{headerIdempotencyKey, "k1"}
	// The message id of a keyed sandbox request is the key's, so a retry
	// is the same message to the network.
	msg := PartnerSandboxMessageID(&merchant.Merchant{ID: fakeMerchantID}, &ledger.Idempotency{Key: "k1"})
	test := func(cases []handlerCase) []handlerCase {
		for i := range cases {
			cases[i].shop = fakeTestShopNo
		}
		return cases
	}

	authorize := `{"cardNo":"crd_1","amount":"12.34","currency":"USD"}`
	runShopCases(t, http.MethodPost, "/shop/sandbox/authorize", test(withErrors([]handlerCase{
		{name: "approved", body: authorize, headers: key, call: "Card,Authorize",
			in: network.AuthRequest{MessageID: msg, CardNo: "crd_1", Amount: 1234, Currency: "USD"}},
		{name: "no messageId here", body: `{"messageId":"m1","cardNo":"crd_1","amount":1,"currency":"USD"}`, field: "messageId"},
		{name: "bad amount", body: `{"cardNo":"crd_1","amount":"x","currency":"USD"}`, field: "amount"},
		{name: "not the merchant's card", body: authorize, errOn: "Card", err: mapCardNotFound.err, code: codeCardNotFound,
			message: mapCardNotFound.message, call: "Card"},
		{name: "key reused", body: authorize, headers: key, call: "Card", err: mapIdemMismatch.err, errOn: "ClaimReadIdempotency",
			code: codeIdemConflict, message: mapIdemMismatch.message},
	}, handlerCase{body: authorize, errOn: "Authorize", call: "Card,Authorize"}, mapCardFrozen, mapLimit)))

	capture := `{"authId":"auth_1","amount":"10.00"}`
	runShopCases(t, http.MethodPost, "/shop/sandbox/capture", test(withErrors([]handlerCase{
		{name: "captured", body: capture, headers: key, call: "Authorization,Clear",
			in: network.ClearRequest{MessageID: msg, AuthID: "auth_1", Amount: 1000}},
		{name: "no amount", body: `{"authId":"auth_1"}`, field: "amount"},
		{name: "another merchant's authorization", body: `{"authId":"auth_other","amount":1}`, call: "Authorization",
			code: codeAuthNotFound, message: "authorization not found"},
		{name: "an unknown one", body: capture, errOn: "Authorization", err: mapAuthNotFound.err, call: "Authorization",
			code: codeAuthNotFound, message: "authorization not found"},
	}, handlerCase{body: capture, errOn: "Clear", call: "Authorization,Clear"}, mapAuthClosed)))

	runShopCases(t, http.MethodPost, "/shop/sandbox/reverse", test([]handlerCase{
		{name: "whole", body: `{"authId":"auth_1"}`, headers: key, call: "Authorization,Reverse",
			in: network.ReverseRequest{MessageID: msg, AuthID: "auth_1"}},
		{name: "another merchant's authorization", body: `{"authId":"auth_other"}`, call: "Authorization", code: codeAuthNotFound,
			message: "authorization not found"},
	}))

	refund := `{"cardNo":"crd_1","amount":5,"currency":"USD"}`
	runShopCases(t, http.MethodPost, "/shop/sandbox/refund", test(withErrors([]handlerCase{
		{name: "refunded", body: refund, headers: key, call: "Card,Refund",
			in: network.RefundRequest{MessageID: msg, CardNo: "crd_1", Amount: 500, Currency: "USD"}},
		{name: "not the merchant's card", body: refund, errOn: "Card", err: mapCardNotFound.err, call: "Card",
			code: codeCardNotFound, message: mapCardNotFound.message},
	}, handlerCase{body: refund, errOn: "Refund", call: "Card,Refund"})))

	runShopCases(t, http.MethodPost, "/shop/sandbox/remittance/settle", test(withErrors([]handlerCase{
		{name: "settled", body: `{"txId":"rmt_1"}`, headers: key, call: "Remittance,ReportRemittance",
			in: [4]string{msg, "rmt_1", "SETTLED", ""}},
		{name: "a reason is no field here", body: `{"txId":"rmt_1","reason":"AC01"}`, field: "reason"},
		{name: "not the merchant's remittance", body: `{"txId":"rmt_1"}`, errOn: "Remittance", err: mapRemitNotFound.err,
			call: "Remittance", code: codeRemitNotFound, message: mapRemitNotFound.message},
	}, handlerCase{body: `{"txId":"rmt_1"}`, errOn: "ReportRemittance", call: "Remittance,ReportRemittance"})))

	runShopCases(t, http.MethodPost, "/shop/sandbox/remittance/return", test([]handlerCase{
		{name: "returned", body: `{"txId":"rmt_1","reason":"AC01"}`, headers: key, call: "Remittance,ReportRemittance",
			in: [4]string{msg, "rmt_1", "RETURNED", "AC01"}},
		{name: "no reason", body: `{"txId":"rmt_1"}`, field: "reason"},
		{name: "bad reason", body: `{"txId":"rmt_1","reason":"lost"}`, field: "reason"},
	}))
}
