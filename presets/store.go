package presets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Store is where user presets and runs live. The zero value has no
// directories: only built-in presets are available, and saves fail.
type Store struct {
	PresetDir string
	RunDir    string
}

// HomeEnv overrides both directories: $NBDSCOPE_HOME/presets and
// $NBDSCOPE_HOME/runs.
const HomeEnv = "NBDSCOPE_HOME"

// DefaultStore returns the store in the user's config and data directories
// (see the package comment). Directories are created on the first save.
func DefaultStore() (*Store, error) {
	return storeFor(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

func storeFor(goos string, getenv func(string) string, home func() (string, error)) (*Store, error) {
	if h := getenv(HomeEnv); h != "" {
		h, err := filepath.Abs(h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", HomeEnv, err)
		}
		return &Store{PresetDir: filepath.Join(h, "presets"), RunDir: filepath.Join(h, "runs")}, nil
	}
	hd, err := home()
	if err != nil || hd == "" {
		return nil, fmt.Errorf("no home directory to keep presets and runs in (set %s): %v", HomeEnv, err)
	}
	if goos == "darwin" {
		base := filepath.Join(hd, "Library", "Application Support", "nbdscope")
		return &Store{PresetDir: filepath.Join(base, "presets"), RunDir: filepath.Join(base, "runs")}, nil
	}
	// XDG base directories; relative values are invalid and ignored.
	config := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) {
		config = filepath.Join(hd, ".config")
	}
	data := getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(data) {
		data = filepath.Join(hd, ".local", "share")
	}
	return &Store{
		PresetDir: filepath.Join(config, "nbdscope", "presets"),
		RunDir:    filepath.Join(data, "nbdscope", "runs"),
	}, nil
}

const fileExt = ".json"

// File and directory permissions (see the package comment).
const (
	filePerm = 0o644
	dirPerm  = 0o755
)

// writeFile atomically creates dir/file with data. Without force it fails
// with an error wrapping ErrExists when the file exists, and an existing file
// is never touched; with force it replaces the file in one rename.
func writeFile(dir, file string, data []byte, force bool) (err error) {
	if dir == "" {
		return errors.New("no directory configured")
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return err
	}
	final := filepath.Join(dir, file)
	tmp, err := os.CreateTemp(dir, "."+file+".*.tmp")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	defer func() {
		// After a link (or a failure) the temporary name must go; after a
		// rename it is gone already and this is a harmless ENOENT.
		os.Remove(tmpName)
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(filePerm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if force {
		if err := os.Rename(tmpName, final); err != nil {
			return err
		}
	} else if err := os.Link(tmpName, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return ErrExists
		}
		// A file system without hard links: reserve the name with an
		// exclusive create, then rename the content over the placeholder.
		f, err2 := os.OpenFile(final, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
		if err2 != nil {
			if errors.Is(err2, fs.ErrExist) {
				return ErrExists
			}
			return err
		}
		f.Close()
		if err := os.Rename(tmpName, final); err != nil {
			os.Remove(final)
			return err
		}
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename, link or remove in dir durable. Best effort: some
// file systems do not support syncing a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// removeFile removes dir/file, reporting a missing file as ErrNotFound.
func removeFile(dir, file string) error {
	if dir == "" {
		return ErrNotFound
	}
	if err := os.Remove(filepath.Join(dir, file)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrNotFound
		}
		return err
	}
	syncDir(dir)
	return nil
}

// listFiles returns the candidate files of dir: regular, not hidden, ending
// in .json, sorted. A missing directory is empty.
func listFiles(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if n[0] == '.' || filepath.Ext(n) != fileExt || e.IsDir() {
			continue
		}
		out = append(out, n) // ReadDir sorts by name
	}
	return out, nil
}

// The presets and the runs are each a directory of named files
// (NAME.json). loadNamed, writeNamed, removeNamed and loadAll are what
// finding, saving, removing and listing one does, for either; kind
// ("preset", "run") names the file's kind in errors.

// loadNamed reads the file of a valid name in dir with load; no directory
// or no such file is ErrNotFound.
func loadNamed[T any](kind, dir, name string, load func(file string) (T, error)) (T, error) {
	var none T
	if err := ValidName(name); err != nil {
		return none, err
	}
	if dir == "" {
		return none, fmt.Errorf("%s %q %w", kind, name, ErrNotFound)
	}
	v, err := load(name + fileExt)
	if errors.Is(err, fs.ErrNotExist) {
		return none, fmt.Errorf("%s %q %w", kind, name, ErrNotFound)
	}
	return v, err
}

// loadFile reads the file of a kind ("run", "preset") in dir and parses
// it, and returns it with its name (the file's, less the extension) and
// path. The name must be a valid one; refuse (nil: none) turns away a
// name the kind cannot have. Errors name the file.
func loadFile[T any](kind, dir, file string, limit int64, parse func([]byte) (T, error), refuse func(name, path string) error) (T, string, string, error) {
	var none T
	path := filepath.Join(dir, file)
	name := strings.TrimSuffix(file, fileExt)
	if err := ValidName(name); err != nil {
		return none, "", "", fmt.Errorf("%s: the file name is not a %s name: %w", path, kind, err)
	}
	if refuse != nil {
		if err := refuse(name, path); err != nil {
			return none, "", "", err
		}
	}
	v, err := parseFile(path, limit, parse)
	return v, name, path, err
}

// writeNamed writes data as the file of name in dir, replacing one only
// with force (ErrExists otherwise).
func writeNamed(kind, dir, name string, data []byte, force bool) error {
	if dir == "" {
		return fmt.Errorf("saving %s %q: no %s directory", kind, name, kind)
	}
	if err := writeFile(dir, name+fileExt, data, force); err != nil {
		if errors.Is(err, ErrExists) {
			return fmt.Errorf("%s %q %w", kind, name, ErrExists)
		}
		return fmt.Errorf("saving %s %q: %w", kind, name, err)
	}
	return nil
}

// removeNamed deletes the file of name from dir (ErrNotFound when there is
// none).
func removeNamed(kind, dir, name string) error {
	if err := removeFile(dir, name+fileExt); err != nil {
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%s %q %w", kind, name, ErrNotFound)
		}
		return fmt.Errorf("removing %s %q: %w", kind, name, err)
	}
	return nil
}

// loadAll reads every file of dir with load: those that load, in name
// order, and an error for each that did not; err when dir cannot be
// listed.
func loadAll[T any](dir string, load func(file string) (T, error)) (out []T, errs []error, err error) {
	files, err := listFiles(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		v, err := load(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, v)
	}
	return out, errs, nil
}
