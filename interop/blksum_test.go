package interop

// blksum against nbdscope: the hash consume mode's root digest is blksum's
// digest of the same export, and the blksum-exec preset sweeps blksum.

import (
	"os/exec"
	"strings"
	"testing"
)

// needBlksum skips when blksum is missing, even under NBDSCOPE_INTEROP=1:
// blksum is not packaged for Debian 12, so .ci/run cannot install it. The
// digests it printed here (blksum 0.11.0, nirs/blkhash built from source)
// are held in engine's TestHashRootIsBlksums, which always runs.
func needBlksum(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("blksum"); err != nil {
		t.Skip("blksum not installed (not packaged for Debian 12: build nirs/blkhash with meson); " +
			"engine's TestHashRootIsBlksums holds digests it printed")
	}
}

// TestHashRootMatchesBlksum: blksum hashes a pattern export of nbdscope
// serve; a run of both sides with --consume hash over spawned pattern
// servers of the same size reports that digest as each side's root.
func TestHashRootMatchesBlksum(t *testing.T) {
	needBlksum(t)
	const size = "64m"
	srv := startServe(t, "--backend", "pattern", "--size", size)
	out := mustRun(t, "", "blksum", srv.uri).out
	fields := strings.Fields(out)
	if len(fields) < 2 || len(fields[0]) != 64 {
		t.Fatalf("blksum printed %q, want DIGEST  URI", out)
	}
	want := fields[0]

	rep, _ := runReport(t, 0, "--backend", "pattern", "--size", size, "--consume", "hash",
		"--workload", "read", "--request-size", "256k", "--connections", "2", "--duration", "4s")
	for _, s := range rep.Sides {
		c := s.Summary.Consumed
		if c.HashPasses == 0 || c.RootDigest != want {
			t.Errorf("side %s: %d full passes, root %q; blksum printed %s", s.Name, c.HashPasses, c.RootDigest, want)
		}
	}
}

// TestSweepBlksumExec: the blksum-exec preset, offered because blksum is
// installed, sweeps blksum: each row moved the export once, and the
// server's send calls per 2 MiB fall where the kernel let the buffer grow
// (a ratio of counts).
func TestSweepBlksumExec(t *testing.T) {
	needBlksum(t)
	rep := sweepExec(t, t.TempDir(), "--preset", "blksum-exec")
	if len(rep.Rows) != 2 || rep.Partial {
		t.Fatalf("want 2 complete rows, got %d (partial %v %q)", len(rep.Rows), rep.Partial, rep.PartialReason)
	}
	for _, row := range rep.Rows {
		if row.Exec == nil || len(row.Exec.Runs) != 1 || row.Exec.Runs[0].Payload.ReadBytes != 256<<20 {
			t.Fatalf("%s: want one run that read the 256 MiB export: %+v", row.Buffer, row.Exec)
		}
	}
	def, big := rep.Rows[0], rep.Rows[1]
	bigCalls, defCalls := big.Figures.Server.SendCallsPer2MiB, def.Figures.Server.SendCallsPer2MiB
	if big.Effective >= 2*def.Effective && bigCalls >= defCalls {
		t.Errorf("send calls per 2 MiB: %v at %s not below %v at default", bigCalls, big.Buffer, defCalls)
	}
}
