// Command example-receiver is the smallest merchant-side callback endpoint:
// it listens on an address, verifies each callback with package receiver
// and prints every verified event on standard output as one JSON line.
//
//	PAYGATE_PRIVATE_KEY=sk_… example-receiver -addr 127.0.0.1:8080 -path /paygate/callbacks
//
// During a roll of the signing key, PAYGATE_PRIVATE_KEY holds both keys,
// separated by a space: a callback signed by either is accepted
// (receiver.HandlerKeys).
//
// PAYGATE_WEBHOOK_SECRET (whsec_…, from `gateway webhook secret roll`; both,
// space-separated, during a roll) makes it verify the Standard Webhooks
// headers too; given alone, without PAYGATE_PRIVATE_KEY, it verifies that
// scheme only (receiver.HandlerStandard).
//
// The private key is read from the environment, not from a flag, so that it
// does not show in the process list. Behind a TLS-terminating proxy in
// production; plain HTTP here.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	path := flag.String("path", "/paygate/callbacks", "URL path of the callback endpoint")
	tolerance := flag.Duration("tolerance", receiver.DefaultTolerance, "accepted clock difference of X-Timestamp, either way")
	flag.Parse()
	keys := strings.Fields(os.Getenv("PAYGATE_PRIVATE_KEY"))
	secrets := strings.Fields(os.Getenv("PAYGATE_WEBHOOK_SECRET"))
	if len(keys) > receiver.KeysMax || len(secrets) > receiver.KeysMax || len(keys)+len(secrets) == 0 {
		fmt.Fprintln(os.Stderr, "example-receiver: set PAYGATE_PRIVATE_KEY to the shop's private key (sk_…) and/or PAYGATE_WEBHOOK_SECRET to its webhook secret (whsec_…); during a roll, the old and the new one")
		os.Exit(2)
	}

	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	onEvent := func(_ context.Context, e receiver.Event) error {
		// A real receiver stores the event (idempotently, on e.EventID)
		// or queues it, and returns quickly: the gateway waits 5 seconds.
		mu.Lock()
		defer mu.Unlock()
		return out.Encode(e)
	}

	mux := http.NewServeMux()
	mux.Handle("POST "+*path, handler(keys, secrets, *tolerance, onEvent))
	srv := &http.Server{
		Addr:              *addr,
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("example-receiver: listening on http://%s%s", *addr, *path)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("example-receiver: %v", err)
	}
}

// handler verifies with the private keys when any are given (X-Sign, and
// the Standard Webhooks headers too when secrets are given), else with the
// webhook secrets alone. (HandlerStandard was once built first whatever the
// settings, and panicked for a receiver given only PAYGATE_PRIVATE_KEY.)
func handler(keys, secrets []string, tolerance time.Duration, onEvent func(context.Context, receiver.Event) error) http.Handler {
	opts := receiver.Options{Tolerance: tolerance, WebhookSecrets: secrets}
	if len(keys) > 0 {
		return receiver.HandlerKeys(keys, opts, onEvent)
	}
	return receiver.HandlerStandard(secrets, opts, onEvent)
}
