//go:build race

package archtest

// raceEnabled: this binary was built with -race, and so were the packages
// go test built beside it.
const raceEnabled = true
