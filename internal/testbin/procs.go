package testbin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ChildPIDs lists the live processes (zombies left out) whose parent is
// pid, as /proc/PID/stat says (Linux); the error is /proc's, where there
// is none.
func ChildPIDs(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses,
		// so cut at the last ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			kids = append(kids, n)
		}
	}
	return kids, nil
}
