package presets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"nbdscope/model"
)

// Size limits of the files read, checked from the file's size before a
// byte is read. A preset is a few KiB. A run weighs about 3 KB a sample
// (both sides' samples, each with its figures and stamp): measured, 'run
// -t 20' at the default 250 ms interval saved 478 KB (158 samples), 'run
// -t 10 -i 0.05' 934 KB (321 samples), a sweep of 8 sizes with --repeat 5
// 45 KB. An hour at the default interval is about 86 MB, an hour at the
// 50 ms floor about 336 MB; 512 MiB is above both (six hours at the
// default), and SaveRun refuses a run over it, so no saved run is one
// the store cannot read back.
const (
	maxPresetFile = 1 << 20
	maxRunFile    = 512 << 20
)

// presetFile is the on-disk form of a preset.
type presetFile struct {
	Version      int          `json:"version"`
	Name         string       `json:"name"`
	Description  string       `json:"description"`
	Demonstrates string       `json:"demonstrates,omitempty"`
	Config       model.Config `json:"config"`
	Sweep        *SweepSpec   `json:"sweep,omitempty"`
}

// marshalIndent writes v as indented JSON with a final newline, without
// escaping <, > and & (the files are for people to read).
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func marshalPreset(p Preset) ([]byte, error) {
	return marshalIndent(presetFile{
		Version: FileVersion, Name: p.Name, Description: p.Description,
		Demonstrates: p.Demonstrates, Config: p.Config, Sweep: p.Sweep,
	})
}

// checkHead checks that data is one JSON object of a version this nbdscope
// reads.
func checkHead(data []byte) error {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return errors.New("empty file")
	}
	if t[0] != '{' {
		if !json.Valid(t) {
			return jsonError(data, json.Unmarshal(t, new(any)))
		}
		return errors.New("not a JSON object")
	}
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return jsonError(data, err)
	}
	if head.Version == nil || string(head.Version) == "null" {
		return fmt.Errorf(`no "version" field: want "version": %d`, FileVersion)
	}
	var v int
	if err := json.Unmarshal(head.Version, &v); err != nil {
		return fmt.Errorf(`"version" %s: want the number %d`, head.Version, FileVersion)
	}
	if v > FileVersion {
		return fmt.Errorf("version %d is newer than this nbdscope (%s) reads (up to %d): upgrade nbdscope", v, model.Version, FileVersion)
	}
	if v < 1 {
		return fmt.Errorf("version %d: want %d", v, FileVersion)
	}
	return nil
}

// parsePreset reads a preset file. Fields left out take the default
// configuration's values; unknown fields are errors. The name is the file's
// "name" field (may be empty); the configuration and sweep are validated.
func parsePreset(data []byte) (Preset, error) {
	if err := checkHead(data); err != nil {
		return Preset{}, err
	}
	// The two sides must both be there: a short array would silently zero
	// side B.
	var shape struct {
		Config *struct {
			Sides *[]json.RawMessage `json:"sides"`
		} `json:"config"`
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		return Preset{}, jsonError(data, err)
	}
	if shape.Config != nil && shape.Config.Sides != nil && len(*shape.Config.Sides) != 2 {
		return Preset{}, fmt.Errorf("config.sides: want 2 sides (A and B), have %d", len(*shape.Config.Sides))
	}

	pf := presetFile{Config: model.DefaultConfig()}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return Preset{}, jsonError(data, err)
	}
	if len(pf.Config.Script) == 0 {
		pf.Config.Script = nil // "script": [] and no script are the same
	}
	p := Preset{Name: pf.Name, Description: pf.Description, Demonstrates: pf.Demonstrates, Config: pf.Config, Sweep: pf.Sweep}
	for i, n := range [2]string{"A", "B"} {
		// The sides are A and B, in that order: the flags (--X-b), --at
		// (b.SETTING), the keys and every table's B/A say so, whatever
		// the file calls them.
		if name := p.Config.Sides[i].Name; name != "" && !strings.EqualFold(name, n) {
			return Preset{}, fmt.Errorf("config.sides[%d].name %q: want %q (the sides are A and B, in that order), or leave it out", i, name, n)
		}
		p.Config.Sides[i].Name = n
		p.Config.Sides[i].Normalize()
	}
	if err := p.validateBody(); err != nil {
		return Preset{}, err
	}
	return p, nil
}

// jsonError adds the line and column to JSON errors that carry an offset.
func jsonError(data []byte, err error) error {
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s: invalid JSON: %v", position(data, se.Offset-1), se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("%s: %s: a JSON %s where %s is wanted", position(data, te.Offset-1), field, te.Value, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("invalid JSON: unexpected end of file")
	}
	// DisallowUnknownFields gives no offset: point at the key's first use.
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if i := bytes.Index(data, []byte(f+":")); i >= 0 {
			return fmt.Errorf("%s: unknown field %s", position(data, int64(i)), f)
		}
		if i := bytes.Index(data, []byte(f)); i >= 0 {
			return fmt.Errorf("%s: unknown field %s", position(data, int64(i)), f)
		}
		return fmt.Errorf("unknown field %s", f)
	}
	return err
}

// position returns "line L, column C" of the byte at index i.
func position(data []byte, i int64) string {
	i = max(0, min(i, int64(len(data))))
	before := data[:i]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int64(len(before) - bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// errTooLarge: a file is over its limit (readLimited).
var errTooLarge = errors.New("larger")

// readLimited reads all of r, refusing more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w than %d bytes", errTooLarge, limit)
	}
	return data, nil
}

// parseFile reads the file at path, refusing more than limit bytes, and
// parses it (a preset's or a run's file). Every error names the file (the
// open error is os's own, which does, and which loadNamed looks into for
// a file that does not exist).
func parseFile[T any](path string, limit int64, parse func([]byte) (T, error)) (T, error) {
	var none T
	f, err := openRegular(path, limit)
	if err != nil {
		return none, err
	}
	defer f.Close()
	data, err := readLimited(f, limit)
	if err != nil {
		return none, fmt.Errorf("%s: %w", path, err)
	}
	v, err := parse(data)
	if err != nil {
		return none, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
