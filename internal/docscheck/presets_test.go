package docscheck

import (
	"strings"
	"testing"

	"nbdscope/presets"
)

// docs/explorer.md says it lists every built-in preset: each is named
// there (qemu-nbd-gap and nbdkit-gap, added with real servers, were not).
func TestExplorerDocNamesEveryBuiltinPreset(t *testing.T) {
	doc := read(t, "docs/explorer.md")
	for _, p := range presets.Builtins() {
		if !strings.Contains(doc, "`"+p.Name+"`") {
			t.Errorf("docs/explorer.md does not name the built-in preset %q", p.Name)
		}
	}
}
