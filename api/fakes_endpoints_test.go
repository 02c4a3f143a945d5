package api

// The fakes of the webhook endpoints (WebhookEndpoints, part of Webhooks).

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/delivery"
)

// The fixture endpoints: endpoint one (the default URL) and another.
const (
	fakeEndpointOne = "we_aaaaaaaaaaaaaaaaaaaaaaa1"
	fakeEndpointTwo = "we_aaaaaaaaaaaaaaaaaaaaaaa2"
)

func fakeEndpoint(id string) *delivery.Endpoint {
	if id == fakeEndpointOne {
		return &delivery.Endpoint{ID: id, No: 1, URL: "https://merchant.example.com/hooks", Enabled: true, CreatedAt: fakeAt}
	}
	return &delivery.Endpoint{ID: id, No: 2, URL: "https://merchant.example.com/two", EventTypes: []string{"card.frozen"},
		Enabled: true, CreatedAt: fakeAt}
}

func (f *fakeServices) Endpoints(ctx context.Context, m int64) ([]delivery.Endpoint, error) {
	return []delivery.Endpoint{*fakeEndpoint(fakeEndpointOne)}, f.answer(ctx, "Endpoints", m, nil, nil)
}

func (f *fakeServices) Endpoint(ctx context.Context, m int64, id string) (*delivery.Endpoint, error) {
	return fakeEndpoint(id), f.answer(ctx, "Endpoint", m, id, nil)
}

func (f *fakeServices) CreateEndpoint(ctx context.Context, m int64, sp delivery.EndpointSpec) (*delivery.CreatedEndpoint, error) {
	return &delivery.CreatedEndpoint{Endpoint: *fakeEndpoint(fakeEndpointTwo), Secret: "whsec_new"}, f.answer(ctx, "CreateEndpoint", m, sp, nil)
}

func (f *fakeServices) UpdateEndpoint(ctx context.Context, m int64, id string, sp delivery.EndpointSpec) (*delivery.Endpoint, error) {
	return fakeEndpoint(id), f.answer(ctx, "UpdateEndpoint", m, sp, nil)
}

func (f *fakeServices) DeleteEndpoint(ctx context.Context, m int64, id string) error {
	return f.answer(ctx, "DeleteEndpoint", m, id, nil)
}

func (f *fakeServices) RollEndpointSecret(ctx context.Context, m int64, id string, overlap time.Duration) (*delivery.SecretRoll, error) {
	return &delivery.SecretRoll{Secret: "whsec_next", RolledAt: fakeAt}, f.answer(ctx, "RollEndpointSecret", m, overlap, nil)
}
