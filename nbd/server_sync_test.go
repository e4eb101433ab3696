package nbd

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBackend counts Sync calls and the writes that had completed when
// each one began, so a test can tell "synced after the write" from "synced
// at some point". With a gate set, Sync blocks until the gate closes.
type syncBackend struct {
	Backend
	mu           sync.Mutex
	writes       int // WriteAt calls (and Zero calls, in syncZeroBackend) completed
	syncs        int // Sync calls begun
	writesAtLast int // writes at the start of the last Sync
	entered      chan struct{}
	gate         chan struct{}
	fail         error
}

func newSyncBackend(size int64) *syncBackend {
	return &syncBackend{Backend: NewMemory(size), entered: make(chan struct{}, 16)}
}

func (b *syncBackend) WriteAt(p []byte, off int64) (int, error) {
	n, err := b.Backend.WriteAt(p, off)
	b.mu.Lock()
	b.writes++
	b.mu.Unlock()
	return n, err
}

func (b *syncBackend) Sync() error {
	b.mu.Lock()
	b.syncs++
	b.writesAtLast = b.writes
	gate, fail := b.gate, b.fail
	b.mu.Unlock()
	b.entered <- struct{}{}
	if gate != nil {
		<-gate
	}
	if fail != nil {
		return fail
	}
	return b.Backend.Sync()
}

func (b *syncBackend) counts() (writes, syncs, writesAtLast int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes, b.syncs, b.writesAtLast
}

// syncZeroBackend adds the fast Zero and Trim of the memory backend, so
// WRITE_ZEROES takes the Zeroer path instead of writing a zero buffer.
type syncZeroBackend struct{ *syncBackend }

func (b syncZeroBackend) Zero(off, n int64, mayTrim bool) error {
	err := b.Backend.(Zeroer).Zero(off, n, mayTrim)
	b.mu.Lock()
	b.writes++
	b.mu.Unlock()
	return err
}

func (b syncZeroBackend) Trim(off, n int64) error { return b.Backend.(Trimmer).Trim(off, n) }

// TestFlushAndFUAReachSync: FLUSH and every write carrying FUA call the
// backend's Sync once, after the data reached the backend and before the
// reply; writes without FUA never do. A no-op FLUSH (the case a kill -9
// test cannot see, since the page cache survives the process) fails here.
func TestFlushAndFUAReachSync(t *testing.T) {
	const size = 1 << 20
	data := make([]byte, 4096)
	cases := []struct {
		name      string
		do        func(c *Client) error
		syncs     int
		afterData bool // the Sync must see this request's write done
	}{
		{"WRITE", func(c *Client) error { _, err := c.WriteAt(data, 0); return err }, 0, false},
		{"WRITE+FUA", func(c *Client) error { return c.Do(writeOp(data, 4096, CmdFlagFUA)) }, 1, true},
		{"FLUSH", func(c *Client) error { return c.Flush() }, 1, false},
		{"WRITE_ZEROES", func(c *Client) error { return c.WriteZeroes(0, 8192, 0) }, 0, false},
		{"WRITE_ZEROES+FUA", func(c *Client) error { return c.WriteZeroes(8192, 8192, CmdFlagFUA) }, 1, true},
		{"WRITE_ZEROES+NO_HOLE+FUA", func(c *Client) error { return c.WriteZeroes(8192, 8192, CmdFlagFUA|CmdFlagNoHole) }, 1, true},
		{"TRIM+FUA", func(c *Client) error { return c.simple(CmdTrim, CmdFlagFUA, 0, 4096) }, 1, false},
		{"READ", func(c *Client) error { _, err := c.ReadAt(data[:512], 0); return err }, 0, false},
	}
	for _, zeroer := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if zeroer {
				name += "/zeroer"
			}
			t.Run(name, func(t *testing.T) {
				sb := newSyncBackend(size)
				var be Backend = sb
				if zeroer {
					be = syncZeroBackend{sb}
				}
				ts := startServer(t, Export{Backend: be})
				c := dial(t, ts, ClientOptions{})
				if err := tc.do(c); err != nil {
					t.Fatal(err)
				}
				writes, syncs, atSync := sb.counts()
				if syncs != tc.syncs {
					t.Fatalf("%s called Sync %d times, want %d", tc.name, syncs, tc.syncs)
				}
				if tc.afterData && (writes == 0 || atSync != writes) {
					t.Fatalf("Sync began with %d of %d writes done: it must follow the request's own write", atSync, writes)
				}
			})
		}
	}
}

func writeOp(p []byte, off uint64, flags uint16) *Op {
	op := NewOp()
	op.Cmd, op.Flags, op.Offset, op.Buf = CmdWrite, flags, off, p
	return op
}

// TestFlushRepliesAfterSync: while Sync blocks, the FLUSH (and a FUA
// write) has no reply, although a READ sent after it has one; a failing
// Sync is the request's error, not a success. A server that replied first
// and synced later (or in the background) would promise durability it
// does not have yet.
func TestFlushRepliesAfterSync(t *testing.T) {
	for _, cmd := range []string{"FLUSH", "WRITE+FUA"} {
		t.Run(cmd, func(t *testing.T) {
			sb := newSyncBackend(1 << 20)
			sb.gate = make(chan struct{})
			released := false
			defer func() {
				if !released {
					close(sb.gate)
				}
			}()
			ts := startServer(t, Export{Backend: sb})
			c := dial(t, ts, ClientOptions{})
			op := NewOp()
			if cmd == "FLUSH" {
				op.Cmd = CmdFlush
			} else {
				op = writeOp(make([]byte, 4096), 0, CmdFlagFUA)
			}
			var replied atomic.Bool
			done := make(chan struct{})
			op.Done = func(*Op) { replied.Store(true); close(done) }
			if err := c.Start(op); err != nil {
				t.Fatal(err)
			}
			select {
			case <-sb.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("Sync was never called")
			}
			// Replies come back in the order the server queues them; a
			// FLUSH answered before its Sync returned would be in before
			// this READ's.
			if _, err := c.ReadAt(make([]byte, 512), 0); err != nil {
				t.Fatal(err)
			}
			if replied.Load() {
				t.Fatalf("%s was answered while Sync was still running", cmd)
			}
			close(sb.gate)
			released = true
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s not answered after Sync returned", cmd)
			}
			if op.Err() != nil {
				t.Fatal(op.Err())
			}
		})
	}
}

// TestSyncFailureIsReported: a Sync error reaches the client as EIO on
// FLUSH and on a FUA write, never as success.
func TestSyncFailureIsReported(t *testing.T) {
	sb := newSyncBackend(1 << 20)
	sb.fail = errors.New("disk on fire")
	ts := startServer(t, Export{Backend: sb})
	c := dial(t, ts, ClientOptions{})
	if err := c.Flush(); !errors.Is(err, EIO) {
		t.Fatalf("FLUSH with a failing Sync: %v, want EIO", err)
	}
	if err := c.Do(writeOp(make([]byte, 512), 0, CmdFlagFUA)); !errors.Is(err, EIO) {
		t.Fatalf("WRITE+FUA with a failing Sync: %v, want EIO", err)
	}
	if _, err := c.WriteAt(make([]byte, 512), 0); err != nil {
		t.Fatalf("plain WRITE (no Sync): %v", err)
	}
}

// TestFlushFUAAdvertised: the export says it takes FLUSH and FUA, so
// clients (the kernel's nbd driver, qemu) send them instead of assuming a
// write-through server; read-only exports too (FLUSH is harmless there).
func TestFlushFUAAdvertised(t *testing.T) {
	for _, ro := range []bool{false, true} {
		ts := startServer(t, Export{Backend: NewMemory(1 << 20), ReadOnly: ro})
		c := dial(t, ts, ClientOptions{})
		f := c.Info().Flags
		if f&FlagSendFlush == 0 || f&FlagSendFUA == 0 {
			t.Fatalf("read-only=%v: transmission flags %#x lack SEND_FLUSH or SEND_FUA", ro, f)
		}
		if err := c.Flush(); err != nil {
			t.Fatalf("read-only=%v: FLUSH: %v", ro, err)
		}
	}
}
