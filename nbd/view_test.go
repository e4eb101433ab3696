package nbd

import (
	"bytes"
	"sync"
	"testing"
)

// TestNullView: View hands out fill of the asked length (growing its
// buffer as needed, concurrently), refuses what ReadAt refuses, and reads
// served through it carry the fill.
func TestNullView(t *testing.T) {
	for _, fill := range []byte{DefaultNullFill, 0} {
		n := NewNull(64<<20, fill)
		var wg sync.WaitGroup
		for _, l := range []int{1, 512, 4096, 64 << 10, 1 << 20, 2 << 20, 3<<20 + 7} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, ok := n.View(int64(64<<20-l), l)
				if !ok || len(v) != l || cap(v) != l {
					t.Errorf("fill %#x: View(%d) = %d bytes (cap %d), %v", fill, l, len(v), cap(v), ok)
					return
				}
				if !bytes.Equal(v, bytes.Repeat([]byte{fill}, l)) {
					t.Errorf("fill %#x: View(%d) is not all fill", fill, l)
				}
			}()
		}
		wg.Wait()
		for _, c := range []struct {
			off int64
			l   int
		}{{64<<20 - 511, 512}, {-1, 1}, {0, MaxPayload + 1}, {0, -1}} {
			if _, ok := n.View(c.off, c.l); ok {
				t.Errorf("View(%d, %d) succeeded", c.off, c.l)
			}
		}
	}
	for _, opts := range []ClientOptions{{}, {NoStructuredReply: true}} {
		cl := benchPair(t, NewNull(64<<20, 0x5a), true, 0, opts)
		for _, l := range []int{1, 4096, 2 << 20, 2<<20 + 512} {
			p := make([]byte, l)
			if _, err := cl.ReadAt(p, int64(l)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p, bytes.Repeat([]byte{0x5a}, l)) {
				t.Fatalf("structured=%v: a %d-byte READ is not all fill", !opts.NoStructuredReply, l)
			}
		}
	}
}
