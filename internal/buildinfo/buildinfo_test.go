package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "nbdscope", Version: "v0.0.0-20261130232751-1838070abcde+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "1838070abcde0123456789"}, {Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2026-11-30T23:27:51Z"}}}
	in := fromBuildInfo(bi, Info{Version: "(devel)", Go: "go1.26", OS: "linux", Arch: "amd64"})
	if got := in.Short(); got != "v0.0.0-20261130232751-1838070abcde+dirty" {
		t.Errorf("Short = %q", got)
	}
	s := in.String()
	for _, want := range []string{"revision 1838070abcde0123456789 (modified)", "go1.26 linux/amd64", "committed 2026-11-30"} {
		if !strings.Contains(s, want) {
			t.Errorf("String lacks %q:\n%s", want, s)
		}
	}
	dev := fromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abcdef0123456789"}}}, Info{})
	if got := dev.Short(); got != "devel+abcdef012345" {
		t.Errorf("devel Short = %q", got)
	}
	if got := (Info{}).String(); !strings.Contains(got, "revision unknown") {
		t.Errorf("no VCS: %q", got)
	}
}
