package sockdiag

import (
	"errors"
	"net/netip"
	"reflect"
	"syscall"
	"testing"
)

// syntheticSeeds are replies no live kernel gives on demand: errors,
// truncations, odd attributes, several messages in one datagram.
func syntheticUnixSeeds() [][]byte {
	u := fakeUnix{ino: 7, peer: 8, typ: TypeStream, state: StateEstablished, name: "\x00abstract",
		rq: 3, wq: 4, mem: mem9(4, 212992), extra: nlAttr(77, []byte("future"))}
	one := nlMsg(sockDiagByFamily, nlmFMulti, 1, u.payload())
	return [][]byte{
		append(append([]byte{}, one...), nlDone(1)...),
		nlMsg(sockDiagByFamily, 0, 1, u.payload()),
		nlErr(1, -int32(syscall.ENOENT)),
		nlErr(1, -int32(syscall.ESTALE)),
		nlMsg(nlmsgDone, nlmFMulti, 1, u32s(negErrno(syscall.EINTR))),
		one[:len(one)-5],
		one[:nlmsgHdrLen+unixDiagMsgLen+2],
		nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 1, mem: []uint32{1}}.payload()),
		nlMsg(sockDiagByFamily, nlmFMulti, 2, u.payload()), // another request's
		{},
	}
}

func syntheticInetSeeds() [][]byte {
	lo := netip.MustParseAddr("127.0.0.1")
	s := fakeTCP{family: afInet, state: StateEstablished, local: netip.AddrPortFrom(lo, 1), remote: netip.AddrPortFrom(lo, 2),
		ino: 9, mem: mem9(1, 2), info: tcpInfoBytes(232, 1, 2, 3)}
	s6 := fakeTCP{family: afInet6, state: StateListen, local: netip.MustParseAddrPort("[::1]:80"), ino: 10, info: tcpInfoBytes(10, 10, 0, 0)}
	one := nlMsg(sockDiagByFamily, nlmFMulti, 1, s.payload())
	return [][]byte{
		append(append(append([]byte{}, one...), nlMsg(sockDiagByFamily, nlmFMulti, 1, s6.payload())...), nlDone(1)...),
		nlMsg(sockDiagByFamily, 0, 1, s.payload()),
		nlErr(1, -int32(syscall.ENOENT)),
		one[:len(one)-3],
		one[:nlmsgHdrLen+40],
	}
}

// checkParse is what every fuzz input must satisfy: no panic, what was in
// dst kept, the same answer twice, and errors that are one of the kinds
// the package documents.
func checkParse[S any](t *testing.T, data []byte, seq uint32, parse func([]byte, uint32, []S) ([]S, bool, error)) {
	var sentinel S
	dst := []S{sentinel}
	out, done, err := parse(data, seq, dst)
	if len(out) < 1 || !reflect.DeepEqual(out[0], sentinel) {
		t.Fatalf("dst's element lost: %d elements", len(out))
	}
	out2, done2, err2 := parse(data, seq, []S{sentinel})
	if !reflect.DeepEqual(out, out2) || done != done2 || (err == nil) != (err2 == nil) {
		t.Fatalf("two parses of the same bytes differ")
	}
	var ke *KernelError
	if err != nil && !errors.Is(err, ErrMalformed) && !errors.As(err, &ke) {
		t.Fatalf("error of no documented kind: %v", err)
	}
	if err != nil && !done && !errors.Is(err, ErrMalformed) {
		t.Fatalf("a kernel error that does not end the reply: %v", err)
	}
}

func FuzzParseUnixDiag(f *testing.F) {
	addSeeds(f, syntheticUnixSeeds(), "unix")
	f.Fuzz(func(t *testing.T, data []byte, seq uint32) {
		socks, err := checkReply(t, data, seq, ParseUnixDiag, KindUnix)
		for _, s := range socks {
			if err == nil && s.Mem.Valid && s.Mem.Fields < 4 {
				t.Fatalf("meminfo with %d fields taken", s.Mem.Fields)
			}
		}
	})
}

func FuzzParseInetDiag(f *testing.F) {
	addSeeds(f, syntheticInetSeeds(), "tcp")
	f.Fuzz(func(t *testing.T, data []byte, seq uint32) {
		socks, _ := checkReply(t, data, seq, ParseInetDiag, KindTCP)
		for _, s := range socks {
			if s.Family != afInet && s.Family != afInet6 {
				t.Fatalf("socket of family %d taken", s.Family)
			}
		}
	})
}

// addSeeds gives a parser's fuzzer the synthetic replies (answering
// sequence 1) and what the live kernel answers for family.
func addSeeds(f *testing.F, synthetic [][]byte, family string) {
	for _, s := range synthetic {
		f.Add(s, uint32(1))
	}
	for _, s := range liveSeeds(f, family) {
		f.Add(s.data, s.seq)
	}
}

// checkReply holds data to what every reply must satisfy, as the reply of
// one dump (checkParse) and of a batch of lookups (checkBatchReply), and
// returns what parse takes from it for the parser's own checks.
func checkReply[S any](t *testing.T, data []byte, seq uint32, parse func([]byte, uint32, []S) ([]S, bool, error), kind Kind) ([]S, error) {
	checkParse(t, data, seq, parse)
	checkBatchReply(t, data, seq, kind)
	socks, _, err := parse(data, seq, nil)
	return socks, err
}

// seed is one datagram of a reply and the sequence number it answered.
type seed struct {
	data []byte
	seq  uint32
}

// checkBatchReply files data as a reply of a batch of three lookups of
// kind numbered from seq-1: no panic, at most the one request it names
// answered.
func checkBatchReply(t *testing.T, data []byte, seq uint32, kind Kind) {
	reqs := []exactReq{{kind: kind, ino: 7}, {kind: kind, ino: 9}, {kind: kind, ino: 1}}
	res := make([]exactRes, len(reqs))
	for i := range res {
		res[i].err = errNoReply
	}
	var sc replyScratch
	i, err := takeExactReply(data, seq-1, reqs, res, &sc)
	answered := 0
	for _, r := range res {
		if r.err != errNoReply {
			answered++
		}
	}
	if (i >= 0) != (answered == 1) || answered > 1 || (err != nil && i >= 0) {
		t.Fatalf("reply filed under %d, %d answered, err %v", i, answered, err)
	}
}
