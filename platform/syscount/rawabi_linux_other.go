//go:build linux && !amd64

package syscount

// rawHere is nil: the raw programs are written for x86-64 only; here the
// programs go on the per-call tracepoints (tracepointPrograms).
var rawHere *rawABI
