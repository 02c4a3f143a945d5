package api_test

import (
	"fmt"
	"net/http"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/api/partner"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/testclock"
	"github.com/paygate/gateway/ledger"
)

// Plugs api/partner into package api's tests (partner_hook_test.go).
func init() {
	api.PartnerServer = func(d api.PartnerDeps) http.Handler {
		return partner.NewServer(partner.Deps{Log: d.Log, Network: as[partner.Network](d.Network), Rails: as[partner.Rails](d.Rails),
			Token: d.Token, Limits: d.Limits, Metrics: d.Metrics, MetricsToken: d.MetricsToken})
	}
	api.PartnerSandbox = func(d api.PartnerDeps) *api.SandboxHandlers {
		return partner.NewSandbox(partner.SandboxDeps{Cards: as[partner.CardReader](d.SandboxCards),
			Network: as[partner.Network](d.Network), Rails: as[partner.Rails](d.Rails),
			Remittances: as[partner.RemittanceReader](d.SandboxRemit), ReadKeys: d.SandboxLedger, Clock: clockOf(d)})
	}
	api.PartnerSandboxMessageID = partner.SandboxMessageID
}

// clockOf is the test clocks on the real ledger and network, nil on fakes
// (the clock's handlers then do not exist).
func clockOf(d api.PartnerDeps) partner.Clock {
	l, lok := d.SandboxLedger.(*ledger.Ledger)
	n, nok := d.Network.(*network.Service)
	if !lok || !nok || n == nil {
		return nil
	}
	return testclock.New(l, n)
}

// as is v as the interface T partner declares; nil stays nil, and a value
// that does not implement T is a test's mistake, told at once.
func as[T any](v any) T {
	var zero T
	if v == nil {
		return zero
	}
	t, ok := v.(T)
	if !ok {
		panic(fmt.Sprintf("%T does not implement %T", v, &zero))
	}
	return t
}
