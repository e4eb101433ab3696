//go:build !linux && !darwin

package nbd

// renameNoReplace renames oldpath to newpath, failing with os.ErrExist if
// newpath exists.
func renameNoReplace(oldpath, newpath string) error { return linkNoReplace(oldpath, newpath) }
