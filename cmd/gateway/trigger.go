package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/paygate/gateway/api/client"
)

// `gateway trigger EVENT` (docs/callbacks.md, "Local development"): makes
// a TEST merchant emit one event of a type, as `stripe trigger` does — by
// real API calls on objects of its own (a card made for the purpose, the
// sandbox's network and rail), so the event is the gateway's own, recorded
// and delivered like any other. A live merchant is refused before anything
// is done: the sandbox, which only test merchants have, is asked first
// with a request without a card (a test merchant gets a 400, anyone else the 404
// of an unknown path), so no live card is ever made.

// triggerExpiryAdvance moves a test merchant's clock past a hold's expiry:
// the sandbox's largest single advance, over the 7-day default. A gateway
// set to hold longer than 30 days expires the hold on a later advance.
const triggerExpiryAdvance = "30d"

// triggerAmount is what an authorization moves (and the card holds).
var triggerAmount = client.MustDecimal("1.00")

// triggers are the fixtures, by event type: each makes what it needs.
var triggers = map[string]func(ctx context.Context, t *trigger) error{
	"card.created": func(ctx context.Context, t *trigger) error { _, err := t.card(ctx, "0"); return err },
	"card.frozen":  func(ctx context.Context, t *trigger) error { _, err := t.frozenCard(ctx); return err },
	"card.unfrozen": func(ctx context.Context, t *trigger) error {
		cardNo, err := t.frozenCard(ctx)
		if err == nil {
			err = t.c.UnfreezeCard(ctx, cardNo)
		}
		return err
	},
	"card.cancelled": func(ctx context.Context, t *trigger) error {
		cardNo, err := t.card(ctx, "0")
		if err == nil {
			err = t.c.CancelCard(ctx, cardNo)
		}
		return err
	},
	"authorization.approved": func(ctx context.Context, t *trigger) error { _, err := t.authorize(ctx, triggerAmount); return err },
	"authorization.declined": func(ctx context.Context, t *trigger) error {
		// More than the card holds: declined for insufficient funds.
		_, err := t.authorize(ctx, client.MustDecimal("1000000.00"))
		return err
	},
	"authorization.cleared": func(ctx context.Context, t *trigger) error {
		id, err := t.authorize(ctx, triggerAmount)
		if err == nil {
			_, err = t.c.SandboxCapture(ctx, client.SandboxCaptureRequest{AuthID: id, Amount: triggerAmount})
		}
		return err
	},
	"authorization.reversed": func(ctx context.Context, t *trigger) error {
		id, err := t.authorize(ctx, triggerAmount)
		if err == nil {
			_, err = t.c.SandboxReverse(ctx, client.SandboxReverseRequest{AuthID: id})
		}
		return err
	},
	"authorization.expired": func(ctx context.Context, t *trigger) error {
		// The merchant's test clock past the hold's expiry (7 days by
		// default, GATEWAY_HOLD_EXPIRY): the advance expires the holds that
		// fall due before it answers (docs/api.md, "The test clock").
		if _, err := t.authorize(ctx, triggerAmount); err != nil {
			return err
		}
		_, err := t.c.SandboxAdvanceClock(ctx, client.SandboxClockAdvanceRequest{Duration: triggerExpiryAdvance})
		return err
	},
	// A remittance to a sandbox beneficiary: SCREENING, IN_FLIGHT, then
	// SETTLED by the sandbox's rail (trigger_remittance.go).
	"remittance.status": func(ctx context.Context, t *trigger) error { return t.remittance(ctx) },
	"card.refunded": func(ctx context.Context, t *trigger) error {
		// A refund matches a capture: authorize and capture first.
		id, err := t.authorize(ctx, triggerAmount)
		if err == nil {
			_, err = t.c.SandboxCapture(ctx, client.SandboxCaptureRequest{AuthID: id, Amount: triggerAmount})
		}
		if err == nil {
			_, err = t.c.SandboxRefund(ctx, client.SandboxRefundRequest{CardNo: t.made[0], Amount: triggerAmount, Currency: t.currency})
		}
		return err
	},
}

func cmdTrigger(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "trigger", "Make a test merchant emit one event of the given type, by API calls on objects of its own: gateway trigger [flags] EVENT_TYPE.")
	mf := defineMerchantFlags(e, fs)
	currency := fs.String("currency", "USD", "the currency of the card made for the event")
	// The event type may come first (gateway trigger card.frozen --shop-no
	// …) or after the flags.
	var typ string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		typ, args = args[0], args[1:]
	}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError(err.Error())
	}
	if typ == "" && fs.NArg() > 0 {
		typ = fs.Arg(0)
		_ = fs.Parse(fs.Args()[1:])
	}
	if typ == "" || fs.NArg() > 0 {
		return usageError("give one event type: " + strings.Join(triggerTypes(), ", "))
	}
	fixture, ok := triggers[typ]
	if !ok {
		return usageError(fmt.Sprintf("%q is not an event type trigger makes: one of %s", typ, strings.Join(triggerTypes(), ", ")))
	}
	c, err := mf.client(e)
	if err != nil {
		return err
	}
	t := &trigger{c: c, currency: strings.ToUpper(*currency)}
	if err := t.mustBeTest(ctx, *mf.shopNo); err != nil {
		return err
	}
	if err := fixture(ctx, t); err != nil {
		return fmt.Errorf("trigger %s: %w", typ, err)
	}
	return printJSON(e, map[string]any{"triggered": typ, "objects": t.made})
}

func triggerTypes() []string {
	out := make([]string, 0, len(triggers))
	for k := range triggers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type trigger struct {
	c        *client.Client
	currency string
	made     []string // the ids of what the fixture made, printed
}

// mustBeTest refuses a live merchant before anything is done.
func (t *trigger) mustBeTest(ctx context.Context, shopNo string) error {
	// No card: a request the sandbox refuses at its door (400 naming
	// cardNo), having done nothing.
	_, err := t.c.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{Amount: triggerAmount, Currency: t.currency},
		client.WithoutIdempotencyKey())
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.Status == http.StatusBadRequest:
		return nil // the sandbox is there: a test merchant
	case errors.As(err, &ce) && ce.Status == http.StatusNotFound:
		return &exitError{code: 1, msg: "trigger: " + shopNo + " is a live merchant; trigger works for test merchants only (merchant create --test)"}
	case err == nil:
		return errors.New("trigger: the sandbox accepted an empty authorization")
	}
	return err
}

// card makes a card of the merchant's in t.currency holding amount.
func (t *trigger) card(ctx context.Context, amount string) (string, error) {
	bins, err := t.c.BINs(ctx)
	if err != nil {
		return "", err
	}
	for _, b := range bins {
		if b.Currency != t.currency {
			continue
		}
		card, err := t.c.CreateCard(ctx, client.CreateCardRequest{BIN: b.BIN, Currency: t.currency, Amount: client.MustDecimal(amount),
			Remark: "gateway trigger"})
		if err != nil {
			return "", err
		}
		t.made = append(t.made, card.CardNo)
		return card.CardNo, nil
	}
	return "", fmt.Errorf("no BIN of %s is open to the merchant (--currency)", t.currency)
}

func (t *trigger) frozenCard(ctx context.Context) (string, error) {
	cardNo, err := t.card(ctx, "0")
	if err == nil {
		err = t.c.FreezeCard(ctx, client.FreezeCardRequest{CardNo: cardNo, Reason: "gateway trigger"})
	}
	return cardNo, err
}

// authorize makes a card holding 10.00 and authorizes amount on it
// through the sandbox; it returns the authorization (none when declined).
func (t *trigger) authorize(ctx context.Context, amount client.Decimal) (string, error) {
	cardNo, err := t.card(ctx, "10.00")
	if err != nil {
		return "", err
	}
	a, err := t.c.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: cardNo, Amount: amount, Currency: t.currency,
		MerchantName: "gateway trigger"})
	if err != nil {
		return "", err
	}
	if a.AuthID == nil {
		return "", nil
	}
	t.made = append(t.made, *a.AuthID)
	return *a.AuthID, nil
}
