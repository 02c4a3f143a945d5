package services

import (
	"testing"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/reconcile"
)

// reconcile names the network's statuses and batch in its own constants;
// they must be the network's, or a row is described wrongly (an open
// authorization reported as "never cleared") or a page read as the last.
func TestReconcileSpeaksTheNetworksTerms(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{
		{reconcile.AuthOpen, network.AuthOpen},
		{reconcile.AuthCleared, network.AuthCleared},
		{reconcile.AuthReversed, network.AuthReversed},
		{reconcile.AuthExpired, network.AuthExpired},
	} {
		if c[0] != c[1] {
			t.Errorf("reconcile's status %q is the network's %q", c[0], c[1])
		}
	}
	if reconcile.SettlementBatch > network.SettlementBatchMax {
		t.Errorf("reconcile asks for %d settlements at once, the network answers at most %d: a full page would look like the last",
			reconcile.SettlementBatch, network.SettlementBatchMax)
	}
}
