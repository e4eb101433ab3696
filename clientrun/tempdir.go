package clientrun

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// staleAge spares a directory younger than this from the sweep of stale
// ones: its owner may have made it and not locked it yet.
const staleAge = time.Minute

// lockedSuffix ends the name of a directory TempDir makes: one that its
// owner locks. A directory of an older nbdscope has no lock, and its
// name no suffix: the sweep of stale ones leaves it alone, since it may
// still be in use.
const lockedSuffix = "-lk"

// TempDir makes a private directory under TMPDIR named prefix, a random
// number and lockedSuffix (os.MkdirTemp), held for this process: locked
// (flock) while it lives and in the janitor's care should it die without
// removing it. remove removes it. Before that it removes the stale
// directories of the same name shape: whose lock nobody holds (their
// owner has gone, however: even the janitor may be killed, with kill -9
// of a whole session), that belong to this user and are older than
// staleAge.
func TempDir(prefix string) (dir string, remove func(), err error) {
	removeStale(prefix)
	dir, err = os.MkdirTemp("", prefix+"*"+lockedSuffix)
	if err != nil {
		return "", nil, err
	}
	GuardDir(dir)
	lock, err := os.Open(dir)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == nil {
		err = os.Chmod(dir, 0o700)
	}
	remove = func() {
		os.RemoveAll(dir)
		ReleaseDir(dir)
		if lock != nil {
			lock.Close()
		}
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return dir, remove, nil
}

// removeStale removes the stale directories named prefix, digits and
// lockedSuffix under TMPDIR (TempDir says which are stale).
func removeStale(prefix string) {
	tmp := os.TempDir()
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		rest, locked := strings.CutSuffix(rest, lockedSuffix)
		if !ok || !locked || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.IsDir() {
			continue
		}
		path := filepath.Join(tmp, e.Name())
		if fi, err := os.Lstat(path); err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < staleAge || !ownedByMe(fi) {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(path) // nobody holds it: its owner has gone
		}
		f.Close()
	}
}

// ownedByMe says whether fi belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
