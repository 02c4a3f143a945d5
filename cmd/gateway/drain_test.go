package main

import (
	"net/http"
	"os"
	"syscall"
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

// TestServeSecondInterruptEndsTheDrain: Ctrl-C twice at a terminal stops
// the gateway at once instead of waiting out the drain. Not parallel: it
// signals the test process itself, which the drain's handler takes.
func TestServeSecondInterruptEndsTheDrain(t *testing.T) {
	g := newGateway(t)
	const drain = 2 * time.Minute
	g.env["GATEWAY_SHUTDOWN_DRAIN"] = drain.String()
	s := g.serve()
	s.mustBeHealthy()

	s.cancel() // the first interrupt
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := s.client.Get(s.url("/readyz"))
		if err != nil {
			t.Fatalf("GET /readyz during the drain: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break // the drain's handler is in place
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d after the drain began", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	second := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup's stop
		t.Logf("stopped %s after the second interrupt", time.Since(second).Round(time.Millisecond))
	case <-time.After(drain / 2):
		t.Fatalf("serve still draining %s after the second interrupt", drain/2)
	}
}
