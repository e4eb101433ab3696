package presets

import (
	"reflect"
	"testing"
)

// FuzzLoadPreset: parsing arbitrary bytes as a preset file never panics,
// and whatever parses saves and loads back unchanged.
func FuzzLoadPreset(f *testing.F) {
	for _, p := range Builtins() {
		data, _ := marshalPreset(p)
		f.Add(data)
	}
	data, _ := marshalPreset(customPreset("custom"))
	f.Add(data)
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"version":1}`, `{"version":99}`, `{"version":"1"}`, `{"version":1.5}`,
		`{"version":1,"name":"x",`, `{"version":1,"config":null}`, `{"version":1,"config":{"sides":null}}`,
		`{"version":1,"config":{"sides":[{},{},{}]}}`, `{"version":1,"config":{"sides":[{"connections":"four"},{}]}}`,
		`{"version":1,"config":{"sides":[{"sndbuf":"1e99g"},{}]}}`, `{"version":1,"config":{"duration":"-5s"}}`,
		`{"version":1,"config":{"script":[{"side":7,"setting":"sndbuf","value":"2m"}]}}`,
		`{"version":1,"sweep":{"sizes":["default","64k"],"bytes":1,"repeat":1}}`,
		`{"version":1,"sweep":{"sizes":["64k"],"bytes":-1,"repeat":1000}}`,
		`{"version":1,"config":{"sides":[{"consume":""},{"placement":""}]}}`, // found by fuzzing: "" means none / the default
		`{"version":1,"unknown":true}`, "{\"version\":1,\"description\":\"a\\u0000b\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePreset(data)
		if err != nil {
			return
		}
		out, err := marshalPreset(p)
		if err != nil {
			t.Fatalf("parsed but does not marshal: %v", err)
		}
		q, err := parsePreset(out)
		if err != nil {
			t.Fatalf("parsed but does not load back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(p.Config, q.Config) || !reflect.DeepEqual(p.Sweep, q.Sweep) || p.Description != q.Description {
			t.Fatalf("changed in a round trip:\n%+v\n%+v", p, q)
		}
	})
}
