package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/api/client/receiver/signature"
	"github.com/paygate/gateway/internal/delivery"
)

// `gateway listen` (docs/callbacks.md, "Local development: gateway
// listen"): the `stripe listen` of this gateway. With the merchant's API
// credentials only it follows the merchant's events — polling GET
// /shop/webhook/events in sequence order after a cursor (startingAfter),
// so nothing connects to the developer's machine and the gateway's SSRF
// rules need no change — and POSTs each event's body to --forward-to,
// signed exactly as a real delivery: X-Timestamp, X-Sign and X-Signatures
// with a signing key, and the Standard Webhooks headers with a whsec_
// secret. As the Stripe CLI does, it signs with a listen secret (and a
// listen signing key) made at start and printed once, unless the developer
// passes the real ones (--webhook-secret, --signing-key, or
// $PAYGATE_WEBHOOK_SECRET, $PAYGATE_PRIVATE_KEY) so that an unchanged
// receiver verifies. It prints each event with its answer, and stops on
// Ctrl-C. Events recorded before it started are not forwarded.

// listenAnswerMax bounds what is read and printed of a local answer.
const listenAnswerMax = 200

func cmdListen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "listen", "Follow the merchant's events through the API and forward each, signed as a real delivery, to a local URL.")
	mf := defineMerchantFlags(e, fs)
	forward := fs.String("forward-to", "", "where to POST each event, e.g. http://127.0.0.1:8080/hooks (required)")
	secret := fs.String("webhook-secret", "", "the whsec_ secret to sign webhook-signature with (default $PAYGATE_WEBHOOK_SECRET, else a listen secret printed at start)")
	signing := fs.String("signing-key", "", "the sk_ key to sign X-Sign with (default $PAYGATE_PRIVATE_KEY, else a listen key printed at start)")
	interval := fs.Duration("interval", time.Second, "how often to ask for new events")
	types := fs.String("events", "", "comma-separated event types to forward (default: all)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	u, err := url.Parse(*forward)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("--forward-to must be an http or https URL, e.g. http://127.0.0.1:8080/hooks")
	}
	if *interval < 100*time.Millisecond {
		return usageError("--interval must be at least 100ms")
	}
	var filter []string
	if *types != "" {
		filter = strings.Split(*types, ",")
		if err := delivery.CheckEventTypes("events", filter); err != nil {
			return usageError(err.Error())
		}
	}
	c, err := mf.client(e)
	if err != nil {
		return err
	}
	l := &listener{e: e, c: c, forward: *forward, types: filter, http: &http.Client{Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if l.secret, err = orEnv(e, *secret, "PAYGATE_WEBHOOK_SECRET", signature.NewSecret); err != nil {
		return err
	}
	if err := signature.CheckSecret(l.secret); err != nil {
		return usageError("--webhook-secret: " + err.Error())
	}
	if l.key, err = orEnv(e, *signing, "PAYGATE_PRIVATE_KEY", newListenKey); err != nil {
		return err
	}
	return l.run(ctx, *interval)
}

// orEnv is the flag's value, else the variable's, else a new one made by
// mk and printed once (it is what the local receiver must be given).
func orEnv(e *env, flagValue, variable string, mk func() (string, error)) (string, error) {
	switch {
	case flagValue != "":
		return flagValue, nil
	case e.getenv(variable) != "":
		return e.getenv(variable), nil
	}
	v, err := mk()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(e.stderr, "listen: no %s given: signing with %s (give it to your receiver; it lasts as long as this listen)\n", variable, v)
	return v, nil
}

// newListenKey is a signing key for X-Sign of this listen only.
func newListenKey() (string, error) { return "sk_listen_" + strings.ToLower(rand.Text()), nil }

type listener struct {
	e           *env
	c           *client.Client
	http        *http.Client
	forward     string
	types       []string
	secret, key string
}

// run polls until ctx ends: first the newest event (the cursor: nothing
// older is forwarded), then every event after the cursor, oldest first.
func (l *listener) run(ctx context.Context, interval time.Duration) error {
	newest, err := l.c.WebhookEvents(ctx, client.WebhookEventsQuery{Order: client.OrderDesc, Size: 1})
	if err != nil {
		return err
	}
	cursor := ""
	if len(newest.List) > 0 {
		cursor = newest.List[0].EventID
	}
	fmt.Fprintf(l.e.stderr, "listen: ready, forwarding new events to %s (Ctrl-C stops)\n", l.forward)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		next, err := l.poll(ctx, cursor)
		if err != nil && ctx.Err() == nil {
			// A failed poll is told and tried again: a gateway restart
			// must not end a developer's session.
			fmt.Fprintf(l.e.stderr, "listen: %v\n", err)
		}
		cursor = next
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// poll forwards the events after cursor and returns the new cursor.
func (l *listener) poll(ctx context.Context, cursor string) (string, error) {
	for {
		q := client.WebhookEventsQuery{Order: client.OrderAsc, Size: 100, StartingAfter: cursor, Types: l.types}
		if cursor == "" {
			q.Page = 1
		}
		page, err := l.c.WebhookEvents(ctx, q)
		if err != nil {
			return cursor, err
		}
		for _, ev := range page.List {
			if err := l.forwardEvent(ctx, ev.EventID); err != nil {
				return cursor, err
			}
			cursor = ev.EventID
		}
		if len(page.List) < q.Size {
			return cursor, nil
		}
	}
}

// forwardEvent POSTs one event's body, signed now, and prints the answer.
// A local receiver that fails is printed, not retried: listen is for
// watching, the gateway's own deliveries retry.
func (l *listener) forwardEvent(ctx context.Context, id string) error {
	ev, err := l.c.WebhookEvent(ctx, id)
	if err != nil {
		return err
	}
	body := []byte(ev.Data)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forward, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	if err := signature.SetHeaders(req.Header, body, ts, l.key); err != nil {
		return err
	}
	if err := signature.SetStandardHeaders(req.Header, id, ts, body, l.secret); err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", delivery.UserAgent)
	answer := ""
	resp, err := l.http.Do(req)
	if err == nil {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, listenAnswerMax+1))
		resp.Body.Close()
		answer = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(raw)))
	} else if ctx.Err() == nil {
		answer = "error: " + err.Error()
	}
	fmt.Fprintf(l.e.stdout, "%s %s %s -> %s\n", ev.CreatedAt.UTC().Format(time.RFC3339), ev.EventType, id, answer)
	return nil
}
