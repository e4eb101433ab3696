package sockdiag

import (
	"errors"
	"testing"
)

// TestUnixDiagVFS: UNIX_DIAG_VFS is read into VFS (the bound file's inode
// and the kernel's device number); a short one is malformed; a socket
// without it has none. Is compares it with stat's st_ino and st_dev,
// whose device encoding differs from the kernel's (glibc's makedev).
func TestUnixDiagVFS(t *testing.T) {
	const kdev = 259<<20 | 300000 // major 259, minor 300000: both past 8 bits
	bound := fakeUnix{ino: 100, typ: TypeStream, state: StateListen, name: "/tmp/.p/s\x00", extra: nlAttr(unixDiagVFS, u32s(4242, kdev))}
	got, _, err := ParseUnixDiag(nlMsg(sockDiagByFamily, nlmFMulti, 1, bound.payload()), 1, nil)
	if err != nil || len(got) != 1 || got[0].VFS == nil || *got[0].VFS != (VFSFile{Ino: 4242, Dev: kdev}) {
		t.Fatalf("bound socket: %+v, %v", got, err)
	}
	makedev := func(major, minor uint64) uint64 {
		return minor&0xff | (major&0xfff)<<8 | (minor&^0xff)<<12 | (major&^0xfff)<<32
	}
	f := *got[0].VFS
	for _, c := range []struct {
		ino, dev uint64
		want     bool
	}{
		{4242, makedev(259, 300000), true},
		{1<<32 | 4242, makedev(259, 300000), true}, // the kernel's 32 bits of a 64-bit inode
		{4243, makedev(259, 300000), false},
		{4242, makedev(259, 300001), false},
		{4242, makedev(8, 1), false},
		{4242, kdev, false}, // the kernel's encoding is not stat's
	} {
		if got := f.Is(c.ino, c.dev); got != c.want {
			t.Errorf("Is(%d, %#x) = %v, want %v", c.ino, c.dev, got, c.want)
		}
	}
	short := fakeUnix{ino: 101, extra: nlAttr(unixDiagVFS, u32s(1))}
	if _, _, err := ParseUnixDiag(nlMsg(sockDiagByFamily, nlmFMulti, 1, short.payload()), 1, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("a short UNIX_DIAG_VFS: %v, want ErrMalformed", err)
	}
	plain, _, _ := ParseUnixDiag(nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 102}.payload()), 1, nil)
	if len(plain) != 1 || plain[0].VFS != nil {
		t.Errorf("a socket without UNIX_DIAG_VFS: %+v", plain)
	}
}
