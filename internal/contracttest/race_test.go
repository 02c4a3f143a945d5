//go:build race

package contracttest

// raceEnabled: the client module's tests run with -race when this one does.
const raceEnabled = true
