package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

type consumeReport struct {
	Sides []struct {
		Name    string `json:"name"`
		Summary struct {
			Bytes  uint64 `json:"bytes"`
			Client struct {
				RecvCallsPer2MiB *float64 `json:"recv_calls_per_2mib"`
				CPUSPerGiB       *float64 `json:"cpu_s_per_gib"`
				UserS            *float64 `json:"user_s"`
			} `json:"client"`
			Consume  string `json:"consume"`
			Consumed struct {
				ScannedBuffers uint64 `json:"scanned_buffers"`
				ZeroBuffers    uint64 `json:"zero_buffers"`
				HashBlocks     uint64 `json:"hash_blocks"`
				HashPasses     uint64 `json:"hash_passes"`
				RootDigest     string `json:"root_digest"`
			} `json:"consumed"`
		} `json:"summary"`
	} `json:"sides"`
	Samples []struct {
		Side       string `json:"side"`
		RootDigest string `json:"root_digest"`
	} `json:"samples"`
}

func runJSON(t *testing.T, args ...string) consumeReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, nbdscopeBin, append([]string{"run", "--json"}, args...)...).Output()
	if err != nil {
		t.Fatalf("nbdscope run %v: %v\n%s", args, err, out)
	}
	var rep consumeReport
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Sides) != 2 {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	return rep
}

// The effect, as counts: the blksum preset (hashing) at the macOS 8 KiB
// send buffer against 2 MiB, in one run. At 8 KiB the client needs more
// receive calls per 2 MiB, a count. It needs more CPU per GiB too, but
// that is a time: in a short run on a busy machine, contention for the
// CPU can close the gap, so it is only logged.
func TestBlksumSmallBufferCostsMore(t *testing.T) {
	rep := runJSON(t, "--preset", "blksum", "--sndbuf-a", "macos", "--sndbuf-b", "2m", "--duration", "4s")
	a, b := rep.Sides[0].Summary, rep.Sides[1].Summary
	for _, s := range rep.Sides {
		c := s.Summary
		if c.Consume != "hash" || c.Consumed.HashBlocks < c.Bytes/(64<<10)/2 {
			t.Fatalf("side %s: consume %q, %d blocks hashed of %d bytes", s.Name, c.Consume, c.Consumed.HashBlocks, c.Bytes)
		}
		if c.Client.RecvCallsPer2MiB == nil || c.Client.CPUSPerGiB == nil || c.Client.UserS == nil || *c.Client.UserS <= 0 {
			t.Fatalf("side %s: client figures missing: %+v", s.Name, c.Client)
		}
	}
	// A receive call at 8 KiB gets at most a send buffer's worth: ~250
	// per 2 MiB, against some 10 to 30 at 2 MiB, where a slow (starved)
	// receiver only gets more per call. Twice is far inside that.
	if *a.Client.RecvCallsPer2MiB < 2*(*b.Client.RecvCallsPer2MiB) {
		t.Errorf("recv calls per 2 MiB: 8 KiB %.1f, not twice 2 MiB's %.1f", *a.Client.RecvCallsPer2MiB, *b.Client.RecvCallsPer2MiB)
	}
	t.Logf("client per 2 MiB: 8 KiB %.1f recv calls, 2 MiB %.1f; CPU s/GiB: 8 KiB %.3f, 2 MiB %.3f",
		*a.Client.RecvCallsPer2MiB, *b.Client.RecvCallsPer2MiB, *a.Client.CPUSPerGiB, *b.Client.CPUSPerGiB)
}

// consume is a live setting: B switches to hash one second in and reports
// the root digest of its full passes over a 16 MiB pattern export (small,
// so that a busy machine still completes a pass after the switch), which
// equals the one computed here from the pattern's definition and the one
// blksum 0.11.0 printed for `nbdscope serve --backend pattern --size 16m`.
func TestLiveHashRootDigest(t *testing.T) {
	const size = 16 << 20
	rep := runJSON(t, "--backend", "pattern", "--size", "16m", "--consume", "none", "--request-size", "1m",
		"--at", "1s:b.consume=hash", "--duration", "5s")
	a, b := rep.Sides[0].Summary, rep.Sides[1].Summary
	if a.Consume != "none" || a.Consumed.HashBlocks != 0 || a.Consumed.RootDigest != "" {
		t.Fatalf("A (none) hashed: %+v", a.Consumed)
	}
	if b.Consume != "hash" || b.Consumed.HashPasses < 1 {
		t.Fatalf("B: consume %q, %+v", b.Consume, b.Consumed)
	}
	root := sha256.New()
	block := make([]byte, 64<<10)
	for off := 0; off < size; off += len(block) {
		for i := 0; i < len(block); i += 8 {
			binary.BigEndian.PutUint64(block[i:], uint64(off+i))
		}
		d := sha256.Sum256(block)
		root.Write(d[:])
	}
	root.Write(binary.LittleEndian.AppendUint64(nil, size))
	want := hex.EncodeToString(root.Sum(nil))
	const blksum = "494474e2bbcae8c2deff5a661d6246f38e6a057a2e18d1bd6ad695f33046c35c"
	if want != blksum {
		t.Fatalf("the pattern's root %s is not blksum's %s", want, blksum)
	}
	if b.Consumed.RootDigest != want {
		t.Fatalf("root digest %s, want %s", b.Consumed.RootDigest, want)
	}
	// Each full pass is reported in the sample it completed in.
	passes := 0
	for _, s := range rep.Samples {
		if s.RootDigest != "" {
			if s.Side != "B" || s.RootDigest != want {
				t.Fatalf("sample of side %s with root %s", s.Side, s.RootDigest)
			}
			passes++
		}
	}
	if passes == 0 {
		t.Fatal("no sample carries a pass's root digest")
	}
}
