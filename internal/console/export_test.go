package console

// UseCheapHashes makes new password hashes cheap (m = 64 KiB, t = 1) for
// the tests that make many users and logins; the hashes still go through
// the same code and parameters-from-the-hash check. It returns the
// function that restores the real parameters.
func UseCheapHashes() (restore func()) {
	old := newHashParams
	newHashParams = hashParams{time: 1, memoryKiB: 64, threads: 1}
	return func() { newHashParams = old }
}

// UseRemitPage makes a remittances page n long, so that paging shows with
// a few remittances; it returns the function that restores the length.
func UseRemitPage(n int) (restore func()) {
	old := remitPageMax
	remitPageMax = n
	return func() { remitPageMax = old }
}

// SetHoldsPageMax lowers the page of holds near expiry for a test.
func SetHoldsPageMax(n int) (restore func()) {
	old := holdsPageMax
	holdsPageMax = n
	return func() { holdsPageMax = old }
}
