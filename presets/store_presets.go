package presets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func (s *Store) presetFile(name string) string { return name + fileExt }

// Presets returns the built-in presets (in their fixed order) and then the
// user's presets (by name). Each user file that cannot be used yields an
// error naming the file and the problem; every other preset still loads.
func (s *Store) Presets() ([]Preset, []error) {
	ps := builtins()
	user, errs, err := loadAll(s.PresetDir, s.loadPreset)
	if err != nil {
		return ps, []error{fmt.Errorf("user presets: %w", err)}
	}
	return append(ps, user...), errs
}

// loadPreset reads the user preset file in PresetDir. Errors name the file.
func (s *Store) loadPreset(file string) (Preset, error) {
	p, name, path, err := loadFile("preset", s.PresetDir, file, maxPresetFile, parsePreset, func(name, path string) error {
		if IsBuiltin(name) {
			return fmt.Errorf("%s: %q %w: rename the file", path, name, ErrBuiltIn)
		}
		return nil
	})
	if err != nil {
		return Preset{}, err
	}
	p.Name, p.File = name, path
	return p, nil
}

// Preset returns the preset of that name: a built-in (matched without
// regard to case) or a user preset.
func (s *Store) Preset(name string) (Preset, error) {
	if err := missingServer(strings.ToLower(name)); err != nil {
		return Preset{}, err
	}
	if p, ok := Builtin(name); ok {
		return p, nil
	}
	if err := missingClient(name); err != nil {
		return Preset{}, err
	}
	return loadNamed("preset", s.PresetDir, name, s.loadPreset)
}

// SavePreset writes a user preset. It refuses built-in names, invalid
// presets and, unless force, replacing an existing preset (ErrExists).
func (s *Store) SavePreset(p Preset, force bool) error {
	if IsBuiltin(p.Name) {
		return fmt.Errorf("preset %q %w: choose another name", p.Name, ErrBuiltIn)
	}
	if err := p.Validate(); err != nil {
		return err
	}
	data, err := marshalPreset(p)
	if err != nil {
		return err
	}
	if _, err := parsePreset(data); err != nil {
		return fmt.Errorf("preset %q would not load back: %w", p.Name, err)
	}
	return s.writePreset(p.Name, data, force)
}

func (s *Store) writePreset(name string, data []byte, force bool) error {
	return writeNamed("preset", s.PresetDir, name, data, force)
}

// RemovePreset deletes a user preset. Built-ins cannot be removed.
func (s *Store) RemovePreset(name string) error {
	if IsBuiltin(name) {
		return fmt.Errorf("preset %q %w and cannot be removed", name, ErrBuiltIn)
	}
	if err := ValidName(name); err != nil {
		return err
	}
	return removeNamed("preset", s.PresetDir, name)
}

// RenamePreset renames a user preset, replacing a preset called newName
// only with force. The new file is in place before the old one goes, so a
// crash in between leaves both, never neither.
func (s *Store) RenamePreset(oldName, newName string, force bool) error {
	if IsBuiltin(oldName) {
		return fmt.Errorf("preset %q %w and cannot be renamed (export it and import it under a new name)", oldName, ErrBuiltIn)
	}
	if IsBuiltin(newName) {
		return fmt.Errorf("preset %q %w: choose another name", newName, ErrBuiltIn)
	}
	if err := ValidName(oldName); err != nil {
		return err
	}
	if err := ValidName(newName); err != nil {
		return err
	}
	p, err := s.Preset(oldName)
	if err != nil {
		return err
	}
	if oldName == newName {
		return nil
	}
	p.Name = newName
	data, err := marshalPreset(p)
	if err != nil {
		return err
	}
	oldPath := filepath.Join(s.PresetDir, s.presetFile(oldName))
	newPath := filepath.Join(s.PresetDir, s.presetFile(newName))
	if strings.EqualFold(oldName, newName) {
		// On a case-insensitive file system both names are one file:
		// writing the new name and removing the old would remove both.
		oi, err1 := os.Stat(oldPath)
		ni, err2 := os.Stat(newPath)
		if err1 == nil && err2 == nil && os.SameFile(oi, ni) {
			if err := writeFile(s.PresetDir, s.presetFile(oldName), data, true); err != nil {
				return fmt.Errorf("renaming preset %q: %w", oldName, err)
			}
			if err := os.Rename(oldPath, newPath); err != nil {
				return fmt.Errorf("renaming preset %q: %w", oldName, err)
			}
			syncDir(s.PresetDir)
			return nil
		}
	}
	if err := s.writePreset(newName, data, force); err != nil {
		return err
	}
	if err := removeFile(s.PresetDir, s.presetFile(oldName)); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("renamed preset %q to %q but could not remove the old file: %w", oldName, newName, err)
	}
	return nil
}

// ExportPreset writes a preset (built-in or user) as a preset file that
// ImportPreset reads.
func (s *Store) ExportPreset(name string, w io.Writer) error {
	p, err := s.Preset(name)
	if err != nil {
		return err
	}
	data, err := marshalPreset(p)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// ImportPreset reads a preset file and saves it as a user preset named
// nameOverride, or the file's "name" when nameOverride is empty. It replaces
// an existing preset only with force. A file that is not a valid preset
// is refused with an error matching ErrInvalid.
func (s *Store) ImportPreset(r io.Reader, nameOverride string, force bool) (Preset, error) {
	data, err := ReadPresetData(r)
	if err != nil {
		return Preset{}, fmt.Errorf("import: %w", err)
	}
	p, err := parsePreset(data)
	if err != nil {
		return Preset{}, invalidError{fmt.Errorf("import: %w", err)}
	}
	if nameOverride != "" {
		p.Name = nameOverride
	}
	if p.Name == "" {
		return Preset{}, invalidError{errors.New(`import: the file has no "name": give one`)}
	}
	if err := s.SavePreset(p, force); err != nil {
		return Preset{}, err
	}
	p.File = filepath.Join(s.PresetDir, s.presetFile(p.Name))
	return p, nil
}

// ReadPresetData reads a preset file's bytes from r: at most the limit of
// a preset file and one byte more, so a file too large is refused (an
// error matching ErrInvalid) without being read whole.
func ReadPresetData(r io.Reader) ([]byte, error) {
	data, err := readLimited(r, maxPresetFile)
	if err != nil && !errors.Is(err, errTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, invalidError{err}
	}
	return data, nil
}
