package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
)

// Disabled merchants (issue 27 point 3, "Done when"): mid-run a merchant
// is disabled (the operator's merchant disable). While it is:
//
//   - its /shop requests, sent by the real API on loopback with its own
//     credentials and bodies that would succeed, are each the 403 of a
//     disabled merchant, and change nothing (checkAfter against the model,
//     which they do not touch);
//   - no domain command of its runs (none could come in through /shop);
//   - the network's authorizations on its cards are declined 05 (do not
//     honour) without a hold (authDecision), while approved holds still
//     clear, reverse and refund, as a network requires;
//
// and once it is enabled again, /shop answers it and its steps resume.
// The model's invariants (balances, journal lengths, Verify) hold
// throughout.

// disabling is the API server the disabled merchants' requests go to.
type disabling struct {
	srv *httptest.Server
}

// shopServer starts the real /shop API on this run's domains, once.
func (s *sim) shopServer() *httptest.Server {
	if s.dis == nil {
		h := api.NewServer(api.Deps{DB: s.db, Merchants: s.l.Merchants, Accounts: s.l.Cards, Cards: s.l.Cards, ReadKeys: s.l.Ledger,
			Bills: s.l.Bills, Remittances: s.l.Remit, Stats: s.l.Ledger, WebhookSettings: s.l.Merchants, Webhooks: s.l.Deliveries,
			Keys: s.l.Merchants, Now: s.nowUTC, RateLimit: api.RateLimit{RPS: 1e6, Burst: 1_000_000}})
		s.dis = &disabling{srv: httptest.NewServer(h)} // loopback, port 0
		s.t.Cleanup(s.dis.srv.Close)
	}
	return s.dis.srv
}

// disabledStep runs the step of a disabled merchant, or disables m now and
// then; false leaves the step to runStep.
func (s *sim) disabledStep(m *mMerchant) bool {
	switch {
	case m.disabled && s.chance(10):
		s.setStatus(m, merchant.Active)
		s.shopCall(m, "GET", "/shop/account", "", http.StatusOK)
		return true
	case m.disabled:
		s.shopRefused(m)
		return true
	case m.creds != nil && s.chance(1):
		s.setStatus(m, merchant.Disabled)
		return true
	}
	return false
}

func (s *sim) setStatus(m *mMerchant, status string) {
	s.curOp, s.curMode = "merchant "+status, faultNone
	if err := s.l.SetMerchantStatus(context.Background(), m.id, status); err != nil {
		s.fail("SetMerchantStatus %s: %v", status, err)
	}
	m.disabled = status == merchant.Disabled
	s.stats["merchant "+strings.ToLower(status)]++
}

// shopRefused sends one request the merchant could make were it enabled:
// 403, and the merchant's state is the model's.
func (s *sim) shopRefused(m *mMerchant) {
	var live []*mCard
	for _, c := range m.cards {
		if c.status != cards.CardCancelled {
			live = append(live, c)
		}
	}
	type req struct{ method, path, body string }
	reqs := []req{{"GET", "/shop/account", ""},
		{"POST", "/shop/card/create", fmt.Sprintf(`{"bin":%q,"currency":%q,"amount":"1.00"}`, m.bin, m.cur)}}
	if len(live) > 0 {
		c := live[s.rng.IntN(len(live))]
		reqs = append(reqs, req{"POST", "/shop/card/transfer", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":%q,"direction":"IN"}`, c.no, m.cur)},
			req{"POST", "/shop/card/freeze", fmt.Sprintf(`{"cardNo":%q,"reason":"sim"}`, c.no)},
			req{"POST", "/shop/card/cancel", fmt.Sprintf(`{"cardNo":%q}`, c.no)},
			req{"GET", "/shop/card/info?cardNo=" + c.no, ""})
	}
	r := reqs[s.rng.IntN(len(reqs))]
	s.curOp = "disabled " + r.method + " " + r.path
	s.shopCall(m, r.method, r.path, r.body, http.StatusForbidden)
	s.stats["shop refused (disabled)"]++
	s.checkAfter(&op{name: s.curOp, m: m, cards: m.cards})
}

// shopCall sends one /shop request under m's credentials and wants status
// (403: the disabled merchant's envelope).
func (s *sim) shopCall(m *mMerchant, method, path, body string, status int) {
	srv := s.shopServer()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		s.fail("request: %v", err)
	}
	req.Header.Set("X-Shop-No", m.creds.ShopNo)
	req.Header.Set("X-Public-Key", m.creds.PublicKey)
	req.Header.Set("Idempotency-Key", s.newKey("disabled"))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		s.fail("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || (status == http.StatusForbidden && !strings.Contains(string(raw), `"code":403,"message":"merchant is disabled"`)) {
		s.fail("%s %s of merchant %d (disabled %v): %d %s, want %d", method, path, m.id, m.disabled, resp.StatusCode, raw, status)
	}
}
