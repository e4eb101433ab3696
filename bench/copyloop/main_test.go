package main

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadAllFillsBuffersInTurn: in both reader modes the reader fills
// its buffers one after another, as requests in flight do, so N chunks
// written land once in each of N buffers, and one buffer takes them all;
// every byte is read and the poll mode's reads go through the poller.
func TestReadAllFillsBuffersInTurn(t *testing.T) {
	const chunk = 256 << 10
	for _, mode := range []string{readBlock, readPoll} {
		for _, nbufs := range []int{1, 8} {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.Repeat([]byte{0xff}, 8*chunk)
			done := make(chan error, 1)
			go func() {
				for p := data; len(p) > 0; {
					n, err := unix.Write(fds[1], p)
					if err != nil {
						done <- err
						return
					}
					p = p[n:]
				}
				done <- unix.Close(fds[1])
			}()
			bufs := readBuffers(1, nbufs, chunk)
			rd := readAll(fds[:1], bufs, chunk, mode)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if mode == readBlock {
				unix.Close(fds[0]) // poll mode's reader owns a dup it closes with its conn
			}
			if rd.got != uint64(len(data)) || rd.calls < 8 {
				t.Errorf("%s, %d buffers: read %d bytes in %d calls, want %d in at least 8", mode, nbufs, rd.got, rd.calls, len(data))
			}
			if mode == readBlock && rd.eagain != 0 {
				t.Errorf("blocking reads returned EAGAIN %d times", rd.eagain)
			}
			for k, b := range bufs[0] {
				if !bytes.Equal(b, data[:chunk]) {
					t.Errorf("%s, %d buffers: buffer %d was not filled", mode, nbufs, k)
				}
			}
		}
	}
}
