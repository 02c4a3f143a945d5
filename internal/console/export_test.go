package console

import (
	"github.com/paygate/gateway/internal/console/auth"
	"github.com/paygate/gateway/internal/console/house"
)

// UseCheapHashes makes new password hashes cheap (m = 64 KiB, t = 1) for
// the tests that make many users and logins; the hashes still go through
// the same code and parameters-from-the-hash check. It returns the
// function that restores the real parameters.
func UseCheapHashes() (restore func()) { return auth.UseCheapHashes() }

// UseRemitPage makes a remittances page n long, so that paging shows with
// a few remittances; it returns the function that restores the length.
func UseRemitPage(n int) (restore func()) {
	old := remitPageMax
	remitPageMax = n
	return func() { remitPageMax = old }
}

// SetHoldsPageMax lowers the page of holds near expiry for a test.
func SetHoldsPageMax(n int) (restore func()) {
	old := house.HoldsPageMax
	house.HoldsPageMax = n
	return func() { house.HoldsPageMax = old }
}

// HashChecks is the number of argon2 computations of password checks so
// far (a test of equal cost counts them rather than timing them).
func HashChecks() int64 { return auth.HashChecks() }

// HoldBeforeHash makes every check that has taken its user's slot call
// arrived, then wait for gate to close, before its hash: a test holds the
// tries of a burst there. It returns the function that removes the hook.
func HoldBeforeHash(gate <-chan struct{}, arrived func()) (restore func()) {
	testBeforeHash = func() {
		arrived()
		<-gate
	}
	return func() { testBeforeHash = nil }
}

// FillHashSlots takes every place among the password hashes of h, as a
// burst of checks would; it returns the function that gives them back.
func FillHashSlots(h *Server) (release func()) {
	for i := 0; i < cap(h.hashSlots); i++ {
		h.hashSlots <- struct{}{}
	}
	return func() {
		for i := 0; i < cap(h.hashSlots); i++ {
			<-h.hashSlots
		}
	}
}
