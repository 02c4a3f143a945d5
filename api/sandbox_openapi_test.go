package api

import "fmt"

// driveSandbox takes every sandbox operation through success and failures
// against docs/openapi.yaml, as a test merchant, and its 404 as the live
// merchant live (TestOpenAPIDocument).
func (c *contract) driveSandbox(live shop) {
	t, s := c.t, c.s
	test := s.testShop()
	k := s.createCard(test, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	lk := s.createCard(live, `{"bin":"453201","currency":"USD","amount":"10.00"}`)
	key := func(name string) []string { return []string{"Idempotency-Key", "contract-" + name} }

	auth := func(amount string) string {
		var out authorizeOut
		c.call(&test, "POST", "/shop/sandbox/authorize",
			fmt.Sprintf(`{"cardNo":%q,"amount":%q,"currency":"USD","merchantName":"Contract Coffee","mcc":"5814","merchantCountry":"US"}`, k.CardNo, amount),
			key("auth-"+amount)...).must(t, 200, 200).into(t, &out)
		if !out.Approved || out.AuthID == nil {
			t.Fatalf("sandbox authorization declined: %+v", out)
		}
		return *out.AuthID
	}
	a1, a2 := auth("10.00"), auth("5.00")
	var declined authorizeOut
	c.call(&test, "POST", "/shop/sandbox/authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"99999.00","currency":"USD"}`, k.CardNo)).
		must(t, 200, 200).into(t, &declined)
	if declined.Approved || declined.AuthID != nil {
		t.Errorf("an authorization above the balance: %+v", declined)
	}
	c.call(&test, "POST", "/shop/sandbox/authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD"}`, lk.CardNo)).must(t, 200, codeCardNotFound)
	c.call(&test, "POST", "/shop/sandbox/authorize", `{"cardNo":"crd_x","amount":"1.001","currency":"USD"}`).must(t, 400, 400)
	c.call(&live, "POST", "/shop/sandbox/authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD"}`, lk.CardNo)).must(t, 404, 404)

	c.call(&test, "POST", "/shop/sandbox/capture", fmt.Sprintf(`{"authId":%q,"amount":"7.50"}`, a1), key("capture")...).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/capture", fmt.Sprintf(`{"authId":%q,"amount":"7.50"}`, a1)).must(t, 200, codeAuthClosed)
	c.call(&test, "POST", "/shop/sandbox/capture", `{"authId":"auth_nope","amount":"1.00"}`).must(t, 200, codeAuthNotFound)
	c.call(&test, "POST", "/shop/sandbox/capture", fmt.Sprintf(`{"authId":%q}`, a2)).must(t, 400, 400)

	c.call(&test, "POST", "/shop/sandbox/reverse", fmt.Sprintf(`{"authId":%q,"amount":"1.00"}`, a2)).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/reverse", fmt.Sprintf(`{"authId":%q}`, a2)).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/reverse", fmt.Sprintf(`{"authId":%q}`, a2)).must(t, 200, codeAuthClosed)
	c.call(&live, "POST", "/shop/sandbox/reverse", fmt.Sprintf(`{"authId":%q}`, a2)).must(t, 404, 404)

	c.call(&test, "POST", "/shop/sandbox/refund", fmt.Sprintf(`{"cardNo":%q,"amount":"2.00","currency":"USD"}`, k.CardNo), key("refund")...).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/refund", fmt.Sprintf(`{"cardNo":%q,"amount":"900.00","currency":"USD"}`, k.CardNo)).must(t, 200, codeLimitExceeded)
	c.call(&test, "POST", "/shop/sandbox/refund", fmt.Sprintf(`{"cardNo":%q,"amount":"2.00","currency":"EUR"}`, k.CardNo)).must(t, 400, 400)

	settled := s.createRemittance(test, remitBody(benUS, `"100.00"`, "USD", ""))
	returned := s.createRemittance(test, remitBody(benUS, `"50.00"`, "USD", ""))
	c.call(&test, "POST", "/shop/sandbox/remittance/settle", fmt.Sprintf(`{"txId":%q}`, settled.TxID)).must(t, 200, codeFailure)
	s.settle(s.remitWorker())
	c.call(&test, "POST", "/shop/sandbox/remittance/settle", fmt.Sprintf(`{"txId":%q}`, settled.TxID), key("settle")...).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/remittance/settle", `{"txId":"rmt_nope"}`).must(t, 200, codeRemitNotFound)
	c.call(&test, "POST", "/shop/sandbox/remittance/return", fmt.Sprintf(`{"txId":%q,"reason":"AC04"}`, returned.TxID), key("return")...).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/remittance/return", fmt.Sprintf(`{"txId":%q}`, returned.TxID)).must(t, 400, 400)
	c.call(&test, "POST", "/shop/sandbox/remittance/return", fmt.Sprintf(`{"txId":%q,"reason":"AC04"}`, returned.TxID)).must(t, 200, codeFailure)
	c.call(&live, "POST", "/shop/sandbox/remittance/return", fmt.Sprintf(`{"txId":%q,"reason":"AC04"}`, returned.TxID)).must(t, 404, 404)
	c.call(nil, "POST", "/shop/sandbox/remittance/settle", `{}`).must(t, 404, 404)

	// The test clock (sandbox_clock.go of api/partner).
	c.call(&test, "GET", "/shop/sandbox/clock", "").must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/clock/advance", `{"duration":"1h"}`, key("clock")...).must(t, 200, 200)
	c.call(&test, "POST", "/shop/sandbox/clock/advance", `{"duration":"31d"}`).must(t, 400, 400)
	c.call(&live, "GET", "/shop/sandbox/clock", "").must(t, 404, 404)
	c.call(&live, "POST", "/shop/sandbox/clock/advance", `{"duration":"1h"}`).must(t, 404, 404)
	c.call(&test, "POST", "/shop/sandbox/remittance/settle", "{}", "X-Public-Key", "\x00delete").must(t, 404, 404)
}
