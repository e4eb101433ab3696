package sockdiag

import (
	"fmt"
	"slices"
	"testing"
)

func TestSocketInode(t *testing.T) {
	for link, want := range map[string]Inode{
		"socket:[12345]":       12345,
		"socket:[4294967295]":  4294967295,
		"socket:[4294967296]":  0, // does not fit: not a socket inode the kernel hands out
		"socket:[]":            0,
		"socket:[0]":           0,
		"socket:[12a]":         0,
		"pipe:[12345]":         0,
		"/dev/null":            0,
		"anon_inode:[eventfd]": 0,
		"socket:[1":            0,
	} {
		got, ok := socketInode(link)
		if got != want || ok != (want != 0) {
			t.Errorf("socketInode(%q) = %d, %v; want %d", link, got, ok, want)
		}
	}
}

func TestParseStatPPID(t *testing.T) {
	for stat, want := range map[string]int{
		"1234 (qemu-nbd) S 1 1234 1234 0 -1 4194560": 1,
		"77 (a) b) (c) R 42 77 77 0":                 42,
		"5 (with space ) and )paren) S 3 5":          3,
		"9 (x) Z 0 0 0":                              0,
	} {
		got, err := parseStatPPID([]byte(stat))
		if err != nil || got != want {
			t.Errorf("parseStatPPID(%q) = %d, %v; want %d", stat, got, err, want)
		}
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S", "1 (x) S abc", "1 (x) S -4"} {
		if _, err := parseStatPPID([]byte(bad)); err == nil {
			t.Errorf("parseStatPPID(%q) took it", bad)
		}
	}
}

func TestDescendants(t *testing.T) {
	parents := map[int]int{
		1: 0, 10: 1, 11: 10, 12: 10, 13: 12, 20: 1, 21: 20,
		30: 31, 31: 30, // a cycle (PIDs reused mid-scan) not under 10
		40: 40, // its own parent
	}
	if got, want := descendants(10, parents), []int{10, 11, 12, 13}; !slices.Equal(got, want) {
		t.Errorf("descendants(10) = %v, want %v", got, want)
	}
	if got := descendants(30, parents); !slices.Equal(got, []int{30, 31}) {
		t.Errorf("descendants in a cycle = %v", got)
	}
	if got := descendants(99, parents); !slices.Equal(got, []int{99}) {
		t.Errorf("descendants of a leaf = %v", got)
	}
}

// TestNames: the kinds and modes print as logs and errors name them, and
// a value with no name prints as its number rather than as another's.
func TestNames(t *testing.T) {
	for v, want := range map[fmt.Stringer]string{
		KindUnix: "unix", KindTCP: "tcp", Kind(0): "kind(0)", Kind(7): "kind(7)",
		ModeAuto: "auto", ModeDump: "dump", ModeExact: "exact", Mode(3): "mode(3)",
	} {
		if got := v.String(); got != want {
			t.Errorf("%#v prints as %q, want %q", v, got, want)
		}
	}
}
