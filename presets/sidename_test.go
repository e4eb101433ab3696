package presets

import (
	"strings"
	"testing"
)

// A preset whose side is named other than A or B read as a pair "A Z"
// whose tables still said B/A and whose --X-b flags, b.SETTING changes
// and B keys acted on "Z": the file is refused, naming the field.
func TestPresetSideNamesAreAandB(t *testing.T) {
	for _, tc := range []struct{ sides, want string }{
		{`[{"name": "A"}, {"name": "Z"}]`, `config.sides[1].name "Z": want "B"`},
		{`[{"name": "B"}, {"name": "A"}]`, `config.sides[0].name "B": want "A"`},
	} {
		_, err := parsePreset([]byte(`{"version": 1, "config": {"sides": ` + tc.sides + `}}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sides %s: got %v, want an error with %q", tc.sides, err, tc.want)
		}
	}
	p, err := parsePreset([]byte(`{"version": 1, "config": {"sides": [{"name": "a"}, {}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Config.Sides[0].Name != "A" || p.Config.Sides[1].Name != "B" {
		t.Errorf("names %q, %q: want A, B", p.Config.Sides[0].Name, p.Config.Sides[1].Name)
	}
}
