package main

import (
	"context"
	"flag"
	"strings"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The operator's commands over a merchant's webhook endpoints
// (docs/callbacks.md, "Webhook endpoints"): the same store as
// /shop/webhook/endpoints, with the URL checked by the gateway's rules and
// allow list (checkCallbackURL). Endpoint one's URL is `merchant
// callback-url`.

func cmdWebhookEndpointList(ctx context.Context, e *env, args []string) error {
	return withMerchant(ctx, e, "webhook endpoint list", "List a merchant's webhook endpoints, endpoint one (its default URL) first.", args, nil,
		func(l *app.Services, m *merchant.Merchant) error {
			list, err := l.Deliveries.Endpoints(ctx, m.ID)
			if err != nil {
				return err
			}
			return printJSON(e, list)
		})
}

// endpointFlags are the settings of an endpoint as flags; a flag not given
// is left as it is.
type endpointFlags struct {
	fs                         *flag.FlagSet
	url, types, enabled, descr *string
}

func defineEndpointFlags(fs *flag.FlagSet) *endpointFlags {
	return &endpointFlags{fs: fs,
		url:     fs.String("url", "", "the endpoint's public http or https URL (docs/callbacks.md)"),
		types:   fs.String("types", "", "comma-separated event types it receives, or all (the default)"),
		enabled: fs.String("enabled", "", "true or false (default true)"),
		descr:   fs.String("description", "", "a note for people, at most 200 bytes"),
	}
}

// spec reads the flags that were given.
func (f *endpointFlags) spec(e *env) (delivery.EndpointSpec, error) {
	var sp delivery.EndpointSpec
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if given["url"] {
		if err := checkCallbackURL(e, "url", *f.url); err != nil {
			return sp, err
		}
		sp.URL = f.url
	}
	if given["types"] {
		types := []string{}
		if *f.types != "all" && *f.types != "" {
			types = strings.Split(*f.types, ",")
		}
		if err := delivery.CheckEventTypes("types", types); err != nil {
			return sp, err
		}
		sp.EventTypes = &types
	}
	if given["enabled"] {
		on := *f.enabled == "true"
		if !on && *f.enabled != "false" {
			return sp, postings.FieldErrorf("enabled", "must be true or false")
		}
		sp.Enabled = &on
	}
	if given["description"] {
		sp.Description = f.descr
	}
	return sp, nil
}

func cmdWebhookEndpointAdd(ctx context.Context, e *env, args []string) error {
	var f *endpointFlags
	return withMerchant(ctx, e, "webhook endpoint add",
		"Add a webhook endpoint (at most 16 a merchant). Prints it with its secret (whsec_…), once.", args,
		func(fs *flag.FlagSet) { f = defineEndpointFlags(fs) },
		func(l *app.Services, m *merchant.Merchant) error {
			sp, err := f.spec(e)
			if err != nil {
				return err
			}
			created, err := l.Deliveries.CreateEndpoint(ctx, m.ID, sp)
			if err != nil {
				return err
			}
			return printJSON(e, created)
		})
}

// withEndpoint is withMerchant with --id, the endpoint's id.
func withEndpoint(ctx context.Context, e *env, name, summary string, args []string, define func(fs *flag.FlagSet),
	fn func(l *app.Services, m *merchant.Merchant, id string) error) error {
	var id *string
	return withMerchant(ctx, e, name, summary, args, func(fs *flag.FlagSet) {
		id = fs.String("id", "", "the endpoint's id, we_… (required)")
		if define != nil {
			define(fs)
		}
	}, func(l *app.Services, m *merchant.Merchant) error {
		if err := delivery.CheckEndpointID("id", *id); err != nil {
			return err
		}
		return fn(l, m, *id)
	})
}

func cmdWebhookEndpointSet(ctx context.Context, e *env, args []string) error {
	var f *endpointFlags
	return withEndpoint(ctx, e, "webhook endpoint set", "Change a webhook endpoint: the flags given change, the others stay.", args,
		func(fs *flag.FlagSet) { f = defineEndpointFlags(fs) },
		func(l *app.Services, m *merchant.Merchant, id string) error {
			sp, err := f.spec(e)
			if err != nil {
				return err
			}
			ep, err := l.Deliveries.UpdateEndpoint(ctx, m.ID, id, sp)
			if err != nil {
				return err
			}
			return printJSON(e, ep)
		})
}

func cmdWebhookEndpointDelete(ctx context.Context, e *env, args []string) error {
	return withEndpoint(ctx, e, "webhook endpoint delete", "Delete a webhook endpoint; its pending deliveries fail.", args, nil,
		func(l *app.Services, m *merchant.Merchant, id string) error {
			if err := l.Deliveries.DeleteEndpoint(ctx, m.ID, id); err != nil {
				return err
			}
			return printJSON(e, map[string]any{"id": id, "deleted": true})
		})
}

func cmdWebhookEndpointRoll(ctx context.Context, e *env, args []string) error {
	var hours *int
	return withEndpoint(ctx, e, "webhook endpoint roll",
		"Replace a webhook endpoint's secret; the old one keeps signing for the overlap. Prints the new secret once.", args,
		func(fs *flag.FlagSet) { hours = overlapFlag(fs, "secret keeps signing") },
		func(l *app.Services, m *merchant.Merchant, id string) error {
			overlap, err := overlapOf(*hours)
			if err != nil {
				return err
			}
			r, err := l.Deliveries.RollEndpointSecret(ctx, m.ID, id, overlap)
			if err != nil {
				return err
			}
			return printRoll(e, map[string]any{"shopNo": m.ShopNo, "id": id, "secret": r.Secret}, r.RolledAt, r.PreviousValidUntil)
		})
}
