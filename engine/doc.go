// Package engine runs a pair of measured NBD sides (server + load process
// each), applies live changes, and reports samples whose figures have one
// definition each (model's metrics.go). It knows nothing of the UI.
package engine
