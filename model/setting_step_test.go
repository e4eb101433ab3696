package model

import "testing"

// + and - step a buffer from the size in effect: at default from what
// default gives on this OS (208k on Linux, 8k on macOS), so + never goes
// below it nor - above it (issue 21, item 10).
func TestBufStepFromEffective(t *testing.T) {
	st, _ := Lookup(SetSndBuf)
	size := func(n int) Value { return Value{Buf: Buf{Kind: BufSize, Bytes: n}} }
	def := Value{}
	cases := []struct {
		name     string
		v        Value
		dir, def int
		want     string // "" for no step
	}{
		{"+ at Linux default", def, 1, 212992, "256k"},
		{"- at Linux default", def, -1, 212992, "128k"},
		{"+ at macOS default", def, 1, 8192, "16k"},
		{"- at macOS default", def, -1, 8192, "4k"},
		{"+ at a default of unknown size", def, 1, 0, ""},
		{"- at a default of unknown size", def, -1, 0, ""},
		{"+ at a default above the ladder", def, 1, 16 << 20, ""},
		{"- at the bottom rung", size(4 << 10), -1, 212992, ""},
		{"- below the ladder", size(1024), -1, 212992, ""},
		{"+ below the ladder", size(1024), 1, 212992, "4k"},
		{"+ at 2m", size(2 << 20), 1, 212992, "4m"},
		{"- at 2m", size(2 << 20), -1, 212992, "1m"},
		{"+ at the top", size(8 << 20), 1, 212992, ""},
		{"+ off the ladder", size(100000), 1, 212992, "128k"},
		{"- off the ladder", size(100000), -1, 212992, "64k"},
		{"+ at macos", Value{Buf: Buf{Kind: BufMacOS}}, 1, 212992, "16k"},
		{"- at macos", Value{Buf: Buf{Kind: BufMacOS}}, -1, 212992, "4k"},
	}
	for _, c := range cases {
		got, ok := st.Step(c.v, c.dir, c.def)
		if !ok {
			if c.want != "" {
				t.Errorf("%s: no step, want %s", c.name, c.want)
			}
			continue
		}
		if c.want == "" || got.Buf.String() != c.want {
			t.Errorf("%s: stepped to %s, want %q", c.name, got.Buf, c.want)
		}
	}
	// Every buffer of the table steps the same way.
	for _, b := range BufferSettings() {
		if got, ok := b.Step(def, 1, 212992); !ok || got.Buf.String() != "256k" {
			t.Errorf("%s: + at default gave %v %v, want 256k", b.Name, got.Buf, ok)
		}
	}
}
