// Package presets holds nbdscope's built-in presets, the user's own presets
// and saved runs, and their import and export.
//
// A preset is a named model.Config (both sides, mode, duration, interval,
// script), with a one-line description and, for built-ins, what it
// demonstrates. A run is an model.Report (config, samples, events, summary
// per side, platform facts) under a name.
//
// # Files
//
// User presets and runs are hand-editable, indented JSON files, one per name
// (NAME.json), each with a schema version:
//
//	presets: {"version": 1, "name": ..., "description": ..., "config": {model.Config}}
//	runs:    {"version": 1, "name": ..., "report": {model.Report}}
//
// They live in the directories of a Store; DefaultStore picks them:
//
//	NBDSCOPE_HOME set: $NBDSCOPE_HOME/presets and $NBDSCOPE_HOME/runs
//	Linux (and other Unix): $XDG_CONFIG_HOME/nbdscope/presets (~/.config/nbdscope/presets)
//	                        $XDG_DATA_HOME/nbdscope/runs (~/.local/share/nbdscope/runs)
//	macOS: ~/Library/Application Support/nbdscope/presets and …/runs
//
// The file name is the name: a preset or run called x is the file x.json, and
// the "name" field inside is informational (rewritten on save and rename).
// Names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$, so a name can never leave
// its directory or hide a file. User presets cannot take a built-in's name.
//
// Loading a preset file fills fields it leaves out from the built-in default
// (model.DefaultConfig), rejects unknown fields (a typo in a hand-edited file
// is an error, not silently ignored) and validates the configuration. Run
// files are records and are read leniently: unknown fields are ignored. A
// file that cannot be used (invalid JSON, wrong field types, a version newer
// than this nbdscope) yields an error naming the file, line and problem; every
// other file still loads. Files whose names start with "." are ignored (they
// include the temporary files of an unfinished save).
//
// # Writes
//
// Every write is atomic: the content goes to a temporary file in the same
// directory, which is fsynced and then linked (no overwrite: the link fails if
// the name exists, so of concurrent saves of one name exactly one wins and the
// others get ErrExists) or renamed (force) onto the final name; then the
// directory is fsynced. An existing preset or run is never replaced without
// force, and a failed save leaves it untouched. Content is checked to load
// back before it is written.
//
// Permissions: files are written 0644 and missing directories created 0755
// (less the umask). Presets and runs hold benchmark settings and figures, no
// secrets, and are meant to be shared.
package presets

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"nbdscope/model"
)

// FileVersion is the schema version of preset and run files.
const FileVersion = 1

// Errors callers test with errors.Is.
var (
	// ErrExists: a save, rename or import would replace an existing preset
	// or run and force was not given. It also matches fs.ErrExist.
	ErrExists error = kindError{"already exists", fs.ErrExist}
	// ErrNotFound: no preset or run of that name. It also matches
	// fs.ErrNotExist.
	ErrNotFound error = kindError{"not found", fs.ErrNotExist}
	// ErrBuiltIn: the operation would change or shadow a built-in preset.
	ErrBuiltIn = errors.New("is a built-in preset")
	// ErrBadName: the name is not a valid preset or run name.
	ErrBadName = errors.New("invalid name")
	// ErrInvalid: a preset file given to import is not a valid preset (not
	// JSON, an unknown field, a value out of range, too large, no name).
	ErrInvalid = errors.New("not a valid preset file")
)

// invalidError marks an error as ErrInvalid without changing its text.
type invalidError struct{ error }

func (e invalidError) Unwrap() error        { return e.error }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// kindError is a sentinel that also matches a standard error.
type kindError struct {
	text string
	also error
}

func (e kindError) Error() string        { return e.text }
func (e kindError) Is(target error) bool { return target == e.also }

// Preset is a named configuration.
type Preset struct {
	Name         string
	Description  string // one line
	Demonstrates string // what the preset shows (built-ins), may be empty
	Config       model.Config
	// Sweep, when set, defines a buffer-size sweep (nbdscope sweep --preset).
	Sweep *SweepSpec
	// BuiltIn presets are compiled in and read-only.
	BuiltIn bool
	// File is the user preset's file; empty for built-ins.
	File string
}

// SweepsClient reports whether the preset sweeps a real client (sweep
// --exec): only sweep can use it, since its Config is just the sweep's
// server, and run or the explorer would run our load instead.
func (p Preset) SweepsClient() bool { return p.Sweep != nil && p.Sweep.Exec != nil }

// SweepSpec defines a buffer-size sweep (sweep.Sweep runs it on side A
// of the preset's configuration): Setting (model.SetSndBuf when empty,
// model.SetClientSndBuf or model.SetClientRcvBuf) takes each of Sizes in
// turn, moving Bytes of payload per point, Repeat times.
type SweepSpec = model.SweepSpec

// Limits of a sweep.
const (
	MaxSweepSizes  = 64
	MaxSweepRepeat = 100
)

// ValidateSweep checks a sweep definition.
func ValidateSweep(s *SweepSpec) error {
	if st, ok := model.Lookup(s.Setting); s.Setting != "" && (!ok || st.Type != model.TypeBuf) {
		var names []string
		for _, b := range model.BufferSettings() {
			names = append(names, b.Name)
		}
		return fmt.Errorf("sweep setting %q: want one of %s", s.Setting, strings.Join(names, ", "))
	}
	if len(s.Sizes) == 0 || len(s.Sizes) > MaxSweepSizes {
		return fmt.Errorf("sweep sizes: want 1 to %d sizes, have %d", MaxSweepSizes, len(s.Sizes))
	}
	for _, b := range s.Sizes {
		// Sizes must survive their text form (what the file stores).
		if _, err := model.ParseBuf(b.String()); err != nil {
			return fmt.Errorf("sweep size: %w", err)
		}
	}
	if s.Bytes <= 0 {
		return fmt.Errorf("sweep bytes %d: want a positive payload per point", s.Bytes)
	}
	if s.Repeat < 1 || s.Repeat > MaxSweepRepeat {
		return fmt.Errorf("sweep repeat %d: want 1…%d", s.Repeat, MaxSweepRepeat)
	}
	if x := s.Exec; x != nil {
		if strings.TrimSpace(x.Command) == "" || x.Warmup < 0 || x.Warmup > MaxSweepRepeat {
			return fmt.Errorf("sweep exec: want a command and a warm-up of 0…%d runs", MaxSweepRepeat)
		}
		if s.Setting != "" && s.Setting != model.SetSndBuf {
			return fmt.Errorf("sweep exec: sweeps the server send buffer only, not %q", s.Setting)
		}
	}
	return nil
}

// Validate checks a preset's name, description, configuration and sweep.
func (p *Preset) Validate() error {
	if err := ValidName(p.Name); err != nil {
		return err
	}
	if err := p.validateBody(); err != nil {
		return fmt.Errorf("preset %q: %w", p.Name, err)
	}
	return nil
}

// validateBody checks everything but the name.
func (p *Preset) validateBody() error {
	if strings.ContainsAny(p.Description, "\n\r") {
		return errors.New("the description must be one line")
	}
	if err := p.Config.Validate(); err != nil {
		return err
	}
	for _, s := range p.Config.Sides {
		// Buffers must survive their text form (what the file stores).
		for _, b := range []model.Buf{s.SndBuf, s.ClientSndBuf, s.ClientRcvBuf} {
			if _, err := model.ParseBuf(b.String()); err != nil {
				return fmt.Errorf("side %s: %w", s.Name, err)
			}
		}
	}
	if p.Sweep != nil {
		if err := ValidateSweep(p.Sweep); err != nil {
			return err
		}
	}
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName checks a preset or run name: 1 to 64 letters, digits, '.', '_'
// or '-', starting with a letter or digit. Such a name is a single, visible
// path element: it cannot contain "/" or "\", be ".." or hide a file.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		if name == "" {
			return fmt.Errorf("%w: empty name", ErrBadName)
		}
		return fmt.Errorf("%w %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrBadName, name)
	}
	return nil
}
