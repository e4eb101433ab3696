package nbd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// Data integrity and connection churn (issue 6).

type segment struct{ off, n int64 }

// randomSegments cuts up to max non-overlapping ranges of varied sizes (a
// few bytes to 160 KiB) at unaligned offsets out of [0, size).
func randomSegments(rng *rand.Rand, size int64, max int) []segment {
	var segs []segment
	off := rng.Int64N(4096)
	for len(segs) < max {
		var n int64
		switch rng.IntN(4) {
		case 0:
			n = 1 + rng.Int64N(600) // smaller than a block
		case 1:
			n = 512 * (1 + rng.Int64N(16)) // aligned sizes (offsets still not)
		case 2:
			n = 1024 + rng.Int64N(31<<10)
		default:
			n = 32<<10 + rng.Int64N(128<<10)
		}
		if off+n > size {
			break
		}
		segs = append(segs, segment{off, n})
		off += n + rng.Int64N(5000)
	}
	return segs
}

// TestIntegrityConcurrentWrites: random writes from 8 connections with 32
// requests in flight each, to the memory and file backends, in rounds of
// non-overlapping ranges (later rounds overwrite earlier ones, after their
// replies: last writer wins); then every byte is read back and compared.
func TestIntegrityConcurrentWrites(t *testing.T) {
	const (
		size   = 12 << 20 // room for 8×32 writes per round (about 8 MiB)
		conns  = 8
		depth  = 32
		rounds = 3
	)
	backends := []struct {
		name string
		open func(t *testing.T) Backend
	}{
		{"memory", func(t *testing.T) Backend { return NewMemory(size) }},
		{"file", func(t *testing.T) Backend { return bkOpenTempFile(t, size) }},
	}
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			ts := startServer(t, Export{Backend: bk.open(t)})
			cls := make([]*Client, conns)
			for i := range cls {
				// Half the connections use simple replies, so both READ
				// paths are checked.
				cls[i] = dial(t, ts, ClientOptions{NoStructuredReply: i%2 == 1})
			}
			want := make([]byte, size)
			rng := rand.New(rand.NewPCG(uint64(len(bk.name)), 6))
			// Write data is cut from a pool of random bytes at random
			// places (generating it byte by byte is slow under -race).
			pool := make([]byte, 2<<20)
			rand.NewChaCha8([32]byte{6}).Read(pool)
			written := 0
			for round := range rounds {
				segs := randomSegments(rng, size, conns*depth)
				if len(segs) < conns*depth {
					t.Fatalf("only %d segments", len(segs))
				}
				rng.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
				data := make([][]byte, len(segs))
				for i, s := range segs {
					at := rng.Int64N(int64(len(pool)) - s.n)
					data[i] = append([]byte(nil), pool[at:at+s.n]...)
				}
				errs := testbin.Concurrently(conns, func(c int) error {
					var ops []*Op
					for i := c; i < len(segs); i += conns {
						op := NewOp()
						op.Cmd, op.Offset, op.Buf = CmdWrite, uint64(segs[i].off), data[i]
						if i%5 == 0 {
							op.Flags = CmdFlagFUA
						}
						if err := cls[c].Start(op); err != nil {
							return err
						}
						ops = append(ops, op)
					}
					for _, op := range ops {
						if err := op.Wait(); err != nil {
							return fmt.Errorf("write %d+%d: %w", op.Offset, len(op.Buf), err)
						}
					}
					return nil
				})
				for _, err := range errs {
					t.Fatalf("round %d: %v", round, err)
				}
				for i, s := range segs {
					copy(want[s.off:], data[i])
					written += int(s.n)
				}
			}
			if err := cls[0].Flush(); err != nil {
				t.Fatal(err)
			}

			// Read back everything, in varied unaligned pieces spread over
			// all connections, 32 in flight each.
			got := make([]byte, size)
			pieces := randomSegments(rng, size, 1<<30) // cover with gaps…
			var all []segment
			prev := int64(0)
			for _, p := range pieces { // …then fill the gaps, so every byte is read
				if p.off > prev {
					all = append(all, segment{prev, p.off - prev})
				}
				all = append(all, p)
				prev = p.off + p.n
			}
			if prev < size {
				all = append(all, segment{prev, size - prev})
			}
			errs := testbin.Concurrently(conns, func(c int) error {
				ops := make([]*Op, 0, depth)
				flush := func() error {
					for _, op := range ops {
						if err := op.Wait(); err != nil {
							return fmt.Errorf("read %d+%d: %w", op.Offset, len(op.Buf), err)
						}
					}
					ops = ops[:0]
					return nil
				}
				for i := c; i < len(all); i += conns {
					op := NewOp()
					op.Cmd, op.Offset, op.Buf = CmdRead, uint64(all[i].off), got[all[i].off:all[i].off+all[i].n]
					if err := cls[c].Start(op); err != nil {
						return err
					}
					if ops = append(ops, op); len(ops) == depth {
						if err := flush(); err != nil {
							return err
						}
					}
				}
				return flush()
			})
			for _, err := range errs {
				t.Fatal(err)
			}
			mismatches, first := 0, -1
			if !bytes.Equal(want, got) {
				for i := range want {
					if want[i] != got[i] {
						if first < 0 {
							first = i
						}
						mismatches++
					}
				}
			}
			if mismatches != 0 {
				t.Fatalf("%d mismatched bytes, the first at offset %d", mismatches, first)
			}
			t.Logf("%d rounds, %d MiB written in varied pieces, %d reads: 0 mismatches", rounds, written>>20, len(all))
		})
	}
}

// TestPatternReadsAllSizes reads the pattern backend with request sizes from
// 512 B to 32 MiB at unaligned offsets, over structured and simple replies,
// and checks every byte with PatternCheck. (Filling and checking the pattern
// costs about a second per 32 MiB under -race, so the large sizes are read
// at fewer offsets.)
func TestPatternReadsAllSizes(t *testing.T) {
	const size = 96 << 20
	ts := startServer(t, Export{Backend: NewPattern(size), ReadOnly: true})
	clients := map[bool]*Client{
		true:  dial(t, ts, ClientOptions{}),
		false: dial(t, ts, ClientOptions{NoStructuredReply: true}),
	}
	type rcase struct {
		n    int
		offs []int64
		sr   []bool
	}
	unaligned := func(n int) []int64 {
		return []int64{0, 1, 7, 511, 4097, 3<<20 + 3, size - int64(n), size - int64(n) - 1}
	}
	both := []bool{true, false}
	var cases []rcase
	for _, n := range []int{512, 513, 4095, 4096, 65536 + 13, 256<<10 + 1} {
		cases = append(cases, rcase{n, unaligned(n), both})
	}
	cases = append(cases,
		rcase{1<<20 - 1, []int64{1, size - (1<<20 - 1)}, both},
		rcase{2 << 20, []int64{7, size - 2<<20 - 3}, both},
		rcase{8<<20 + 5, []int64{3}, []bool{false}},
		rcase{32 << 20, []int64{5}, []bool{true}}, // the largest payload, at an odd offset
	)
	for _, rc := range cases {
		for _, sr := range rc.sr {
			c := clients[sr]
			ops := make([]*Op, len(rc.offs))
			for i, off := range rc.offs {
				ops[i] = NewOp()
				ops[i].Cmd, ops[i].Offset, ops[i].Buf = CmdRead, uint64(off), make([]byte, rc.n)
				if err := c.Start(ops[i]); err != nil {
					t.Fatal(err)
				}
			}
			for _, op := range ops {
				if err := waitTimeout(t, op, 60*time.Second); err != nil {
					t.Fatalf("sr=%v read %d at %d: %v", sr, rc.n, op.Offset, err)
				}
				if bad, ok := PatternCheck(int64(op.Offset), op.Buf); !ok {
					t.Fatalf("sr=%v read %d at %d: wrong byte at offset %d", sr, rc.n, op.Offset, bad)
				}
			}
			// The checker itself catches a single wrong byte.
			b := ops[0].Buf
			b[len(b)/2] ^= 1
			if bad, ok := PatternCheck(int64(ops[0].Offset), b); ok || bad != int64(ops[0].Offset)+int64(len(b)/2) {
				t.Fatalf("PatternCheck missed a flipped byte (%v, %d)", ok, bad)
			}
		}
	}
}

// TestConnectionChurn: up to 1,000 connect, handshake, disconnect cycles
// (as many as fit in a time budget, at least 100) against an in-process
// server; goroutines and file descriptors return to their starting level and
// the server counts every connection.
func TestConnectionChurn(t *testing.T) {
	const cycles = 1000
	const budget = 30 * time.Second
	ts := startServer(t, Export{Name: "disk", Backend: NewMemory(1 << 20)})
	base := snapshot()
	before := ts.srv.Stats().Accepted
	start := time.Now()
	done := 0
	for i := 0; i < cycles && time.Since(start) < budget; i++ {
		opts := ClientOptions{Export: "disk", NoStructuredReply: i%3 == 1, BlockStatus: i%3 == 2}
		if i%4 == 3 {
			opts.Export = "" // the default export
		}
		ctx, cancel := contextTimeout(5 * time.Second)
		c, err := Dial(ctx, ts.uri, opts)
		cancel()
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if i%10 == 0 {
			if _, err := c.ReadAt(make([]byte, 512), 0); err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
		}
		c.Close()
		done++
	}
	// The budget only bounds the loop on a slow machine; the point is the
	// leak check below, which needs some churn, not a given throughput.
	const minCycles = 100
	t.Logf("%d of %d cycles ran in %v (budget %v)", done, cycles, time.Since(start).Round(time.Millisecond), budget)
	if done < minCycles {
		t.Errorf("only %d cycles in %v, want at least %d", done, budget, minCycles)
	}
	expectNoLeak(t, base, "connection churn", func() bool { return ts.srv.Stats().Open == 0 })
	if got := ts.srv.Stats().Accepted - before; got != uint64(done) {
		t.Errorf("server accepted %d connections, want %d", got, done)
	}
}
