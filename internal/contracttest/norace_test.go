//go:build !race

package contracttest

const raceEnabled = false
