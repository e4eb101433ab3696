//go:build race

package nbd

// raceEnabled tells tests that the race detector is on (allocation counts
// and sync.Pool behave differently under it).
const raceEnabled = true
