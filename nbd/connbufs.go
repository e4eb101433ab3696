package nbd

import (
	"sync"

	"golang.org/x/sys/unix"
)

// connBufs are one connection's payload buffers (its WRITEs' data, its
// READs' replies): mapped for it, by size class, reused by its requests,
// and unmapped when it ends.
//
// Why not the process-wide pools (getBuf): a WRITE's buffer is taken when
// its header arrives, before its payload, and a pooled buffer outlives
// the connection. 256 connections each sending a 32 MiB WRITE header and
// 1000 bytes of payload, then closing, left the server at 538 MiB of
// resident memory (9 MiB idle) for good: each first byte landed in a
// huge page of a fresh 32 MiB buffer, and the buffers stayed in the pool
// (nothing allocates on an idle server, so no collection ever empties
// it). A buffer mapped here costs memory only where bytes arrive (a
// header alone costs address space), and munmap gives it back to the
// kernel at once when the connection ends, whatever the collector does.
// READs too: 8 connections that each read 4 × 32 MiB from the memory
// backend and closed left 1037 MiB resident (9 idle) in the pools.
// What a connection holds at once stays bounded by its in-flight limit
// (acquireMem); its free buffers are at most what it once had in flight.
type connBufs struct {
	mu   sync.Mutex
	free [maxPoolShift + 1][]*connBuf
	all  []*connBuf // every buffer mapped, to unmap at the end
}

// connBuf is one buffer: data is what a request uses (its length the
// request's), mapping what to unmap (nil: a heap fallback).
type connBuf struct {
	data    []byte
	mapping []byte
	class   int
}

// get returns a buffer of n bytes (n ≤ MaxPayload).
func (cb *connBufs) get(n int) *connBuf {
	cl := poolClass(n)
	cb.mu.Lock()
	if l := len(cb.free[cl]); l > 0 {
		b := cb.free[cl][l-1]
		cb.free[cl][l-1] = nil
		cb.free[cl] = cb.free[cl][:l-1]
		cb.mu.Unlock()
		b.data = b.data[:n]
		return b
	}
	cb.mu.Unlock()
	b := &connBuf{class: cl}
	data, mapping, err := mapPayload(1 << cl)
	if err != nil {
		// No address space to map (a tight ulimit -v): the heap's
		// buffer works as before, without the early return.
		data, mapping = MakePayload(1<<cl), nil
	}
	b.data, b.mapping = data[:n], mapping
	cb.mu.Lock()
	cb.all = append(cb.all, b)
	cb.mu.Unlock()
	return b
}

// put returns a buffer for the connection's next request.
func (cb *connBufs) put(b *connBuf) {
	cb.mu.Lock()
	cb.free[b.class] = append(cb.free[b.class], b)
	cb.mu.Unlock()
}

// release unmaps every buffer; the connection's requests are all done.
func (cb *connBufs) release() {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for _, b := range cb.all {
		if b.mapping != nil {
			unix.Munmap(b.mapping)
		}
		b.data, b.mapping = nil, nil
	}
	cb.all = nil
	cb.free = [maxPoolShift + 1][]*connBuf{}
}

// mapAnon maps n bytes of private anonymous memory: no page is backed
// until it is written.
func mapAnon(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}
