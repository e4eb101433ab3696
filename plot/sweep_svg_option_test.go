package plot

import (
	"testing"

	"nbdscope/model"
)

// A saved sweep's SVG names the buffer it swept, each its own: a sweep of
// --server-rcvbuf was titled "server SO_SNDBUF".
func TestSweptOptionNamesEverySweptBuffer(t *testing.T) {
	seen := map[string]string{}
	for _, st := range model.BufferSettings() {
		name := sweptOption(st.Name)
		if other, dup := seen[name]; dup {
			t.Errorf("%s and %s are both titled %q", st.Name, other, name)
		}
		seen[name] = st.Name
	}
}
