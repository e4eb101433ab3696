package sockdiag

import "slices"

// Thresholds of a full and an empty send buffer, as shares of its limit.
const (
	FullShare  = 0.90
	EmptyShare = 0.10
)

// Fill sums up the send-buffer samples of one group of sender sockets over
// a window (from one Take to the next). A sample is one sender socket seen
// at one tick, so 8 connections sampled 200 times make 1600 samples.
// With Samples == 0 nothing was measured: every figure is n/a, not 0.
type Fill struct {
	Samples int
	// FullPct is the share of samples, in percent, in which the sender had
	// at least 90% of its limit in flight: it was waiting for its reader.
	FullPct float64
	// EmptyPct is the share in which it had less than 10% in flight: the
	// reader was waiting for it, and a bigger buffer cannot help.
	EmptyPct float64
	// MeanBytes is the mean, over the samples, of the memory the sender has
	// charged against its send buffer ("in flight"), in bytes. It is what
	// the kernel compares with the limit before it lets the sender queue
	// more, so "full" means the sender waited.
	//
	// Unix: SK_MEMINFO_WMEM_ALLOC. unix_stream_sendmsg allocates each skb
	// on the sender's socket (sock_alloc_send_pskb, which charges its
	// truesize to the sender's sk_wmem_alloc and blocks while that is at
	// sk_sndbuf) and queues it on the peer's receive queue; the charge is
	// only released (sock_wfree) when the reader has consumed it. So it
	// counts the bytes the peer has not read yet, at truesize: payload plus
	// the skb's overhead, measured 19% more for 4 KiB writes and 2% for
	// writes of 64 KiB or 2 MiB (whose skbs are up to half the buffer). It
	// is the figure SIOCOUTQ returns and `ss -xm` prints as t; the payload
	// is the receiver's RecvQueued (SIOCINQ).
	//
	// TCP: SK_MEMINFO_WMEM_QUEUED, the write and retransmit queues (data
	// not yet sent or not yet acknowledged), also at truesize: the kernel
	// lets the sender queue while it is below sk_sndbuf
	// (sk_stream_memory_free). On loopback the receiver's kernel
	// acknowledges what fits its receive buffer at once, so this fills
	// when the reader stops reading. `ss -tm` prints it as w.
	MeanBytes float64
	// Limit is the largest send-buffer limit (SK_MEMINFO_SNDBUF) seen.
	Limit int64
	// LastBytes is the mean bytes in flight at the window's last tick, for
	// a gauge of the current fill against Limit.
	LastBytes float64
	// RecvSamples counts the samples in which the receiving socket was
	// seen too (it is local); RecvMeanBytes is the mean payload bytes
	// queued at it, not yet read (UDIAG_SHOW_RQLEN's rqueue, inet_diag's
	// idiag_rqueue: what SIOCINQ returns).
	RecvSamples   int
	RecvMeanBytes float64
	// Ticks is the number of ticks in the window.
	Ticks int
	// Gone lists the sender sockets that vanished during the window (or
	// never were a unix or TCP socket of this network namespace); they are
	// no longer sampled.
	Gone []Inode
	// Errors counts the ticks whose lookups failed (and gave no samples);
	// LastError is the last such failure.
	Errors    int
	LastError error
	// Refused is why a sender of Gone could not be read: its process
	// refused to let its descriptors be read, and no other reader found it
	// (on macOS there is none).
	Refused error
}

// OK says the window holds at least one sample.
func (f Fill) OK() bool { return f.Samples > 0 }

// sample is one sender socket at one tick; Fill's fields say what each
// figure is.
type sample struct {
	InFlight   int64 // the sender's bytes charged against its send buffer
	Limit      int64 // the sender's send buffer, SK_MEMINFO_SNDBUF
	HasRecv    bool  // the receiving socket was seen
	RecvQueued int64 // payload bytes waiting at the receiver
}

// window accumulates the samples of a Fill.
type window struct {
	samples, full, empty int
	sumBytes             float64
	limit                int64
	recvSamples          int
	sumRecv              float64
	ticks                int
	lastSum              float64
	lastN                int
	gone                 []Inode
	errors               int
	lastErr              error
	refused              error
}

func (w *window) add(s sample) {
	w.samples++
	w.sumBytes += float64(s.InFlight)
	w.limit = max(w.limit, s.Limit)
	if s.Limit > 0 {
		fill := float64(s.InFlight) / float64(s.Limit)
		if fill >= FullShare {
			w.full++
		}
		if fill < EmptyShare {
			w.empty++
		}
	}
	if s.HasRecv {
		w.recvSamples++
		w.sumRecv += float64(s.RecvQueued)
	}
}

func (w *window) fill() Fill {
	f := Fill{
		Samples: w.samples, Limit: w.limit, RecvSamples: w.recvSamples, Ticks: w.ticks,
		Gone: slices.Clone(w.gone), Errors: w.errors, LastError: w.lastErr, Refused: w.refused,
	}
	if w.samples > 0 {
		n := float64(w.samples)
		f.FullPct = 100 * float64(w.full) / n
		f.EmptyPct = 100 * float64(w.empty) / n
		f.MeanBytes = w.sumBytes / n
	}
	if w.recvSamples > 0 {
		f.RecvMeanBytes = w.sumRecv / float64(w.recvSamples)
	}
	if w.lastN > 0 {
		f.LastBytes = w.lastSum / float64(w.lastN)
	}
	return f
}
