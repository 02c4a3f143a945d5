package api

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
)

// The HTTP fuzz run's disabled merchant (issue 27, "Done when"): a merchant
// that could do everything — funded, an active card, every BIN open — is
// disabled, then sent the fuzz run's requests under its own credentials
// (and the mixes of the other merchant's) with valid bodies among them.
// Nothing succeeds (no 200 of any envelope code), nothing moves, every
// well-formed request to a /shop route is the 403 of a disabled merchant,
// and enabling it again restores service.
func TestHTTPFuzzDisabledMerchant(t *testing.T) {
	seed := *httpFuzzSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: go test ./api -run 'TestHTTPFuzzDisabledMerchant$' -args -httpfuzz.seed=%d", seed)
		}
	})
	s := newTestServer(t, serverOptions{rateLimit: RateLimit{RPS: 1e6, Burst: 1_000_000}})
	sh, other := s.fundedShop(), s.fundedShop()
	own := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"20.00"}`)
	card := fmt.Sprintf("%q", own.CardNo)
	tg := &fuzzTarget{routes: s.shopRoutes(), ids: []string{own.CardNo, "crd_" + strings.Repeat("0", 20)}, sh: sh, other: other,
		templates: map[string][]fuzzMember{
			"/shop/card/create":   {{"bin", `"453201"`}, {"currency", `"USD"`}, {"amount", `"1.00"`}},
			"/shop/card/transfer": {{"cardNo", card}, {"amount", `"1.00"`}, {"currency", `"USD"`}, {"direction", `"IN"`}},
			"/shop/card/freeze":   {{"cardNo", card}, {"reason", `"lost"`}},
			"/shop/card/cancel":   {{"cardNo", card}},
			"/shop/remittance/create": {{"payer_id", `"payer-1"`}, {"beneficiary", benDE}, {"amount", `"10.00"`},
				{"currency", `"EUR"`}, {"purpose", `"SUPP"`}},
		}}
	ctx := context.Background()
	if err := s.l.SetMerchantStatus(ctx, sh.m.ID, merchant.Disabled); err != nil {
		t.Fatal(err)
	}
	before := s.journal()

	// Every route, well formed, under the merchant's own credentials: the
	// disabled merchant's 403.
	for path, members := range tg.templates {
		s.request(&sh, "POST", path, string(fuzzBody(members))).must(t, 403, 403)
	}
	for _, route := range tg.routes {
		method, path, _ := strings.Cut(route, " ")
		// The sandbox is hidden from a live merchant whatever its status:
		// 404 before authentication (api/sandbox_routes.go).
		if method == "GET" && !strings.HasPrefix(path, sandboxPrefix) {
			s.request(&sh, method, path+"?cardNo="+own.CardNo, "").must(t, 403, 403)
		}
	}
	// The fuzz run's requests.
	rng := rand.New(rand.NewPCG(seed, 27))
	statuses := map[int]int{}
	for i := 0; i < 400; i++ {
		req := tg.generate(rng)
		status, _, problem := s.fuzzSend(req)
		statuses[status]++
		if problem != "" || status == 200 {
			t.Errorf("seed %d, request %d: status %d %s\n  request: %s", seed, i, status, problem, req)
		}
	}
	t.Logf("seed %d: statuses %v", seed, statuses)
	if statuses[403] == 0 {
		t.Errorf("statuses %v: no request reached the disabled merchant's refusal", statuses)
	}
	if after := s.journal(); after != before {
		t.Errorf("a disabled merchant's requests changed the journal:\n  before %s\n  after  %s", before, after)
	}
	if err := s.l.SetMerchantStatus(ctx, sh.m.ID, merchant.Active); err != nil {
		t.Fatal(err)
	}
	s.request(&sh, "GET", "/shop/account", "").must(t, 200, 200)
	s.request(&sh, "POST", "/shop/card/freeze", `{"cardNo":`+card+`,"reason":"back"}`).must(t, 200, 200)
}
