// Package interop checks nbdscope's NBD server and client against the real
// tools: qemu-img, qemu-io and qemu-nbd (qemu-utils), nbdinfo and nbdcopy
// (libnbd-bin), nbdkit and fio.
//
// It holds tests only. They build the nbdscope binary once, run
// "nbdscope serve" as a child process and drive it with the real clients,
// and drive real servers (nbdkit, qemu-nbd) with the Go client.
//
// A test whose tools are missing is skipped, unless NBDSCOPE_INTEROP=1 is
// set (as on CI), where a missing tool fails the test:
//
//	NBDSCOPE_INTEROP=1 go test -race -count=1 ./interop/
//
// The expected results follow /work/shared/nbd-notes.md, section 5.
package interop
