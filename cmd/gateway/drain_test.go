package main

import (
	"net/http"
	"testing"
	"time"
)

// On SIGTERM (here: serve's context ends) /readyz answers 503 at once while
// the listener still serves, for GATEWAY_SHUTDOWN_DRAIN; only then does the
// gateway stop. Before, the listener closed within milliseconds and a load
// balancer's clients met connection refused (issue 31, finding 7).
func TestServeDrainsBeforeStopping(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	const drain = 3 * time.Second
	g.env["GATEWAY_SHUTDOWN_DRAIN"] = drain.String()
	s := g.serve()
	s.mustBeHealthy()

	stopped := time.Now()
	s.cancel()
	// Readiness fails first, while the process still answers.
	deadline := time.Now().Add(drain)
	for {
		resp, err := s.client.Get(s.url("/readyz"))
		if err != nil {
			t.Fatalf("GET /readyz during the drain: %v (the listener closed before readiness failed)", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d after the drain began", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp, err := s.client.Get(s.url("/healthz")); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz during the drain: %v, want 200 (requests are still served)", err)
	} else {
		resp.Body.Close()
	}
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup's stop
		if took := time.Since(stopped); took < drain {
			t.Errorf("serve stopped %s after the signal, before the %s drain", took, drain)
		}
	case <-time.After(drain + time.Minute):
		t.Fatal("serve did not stop after the drain")
	}
}
