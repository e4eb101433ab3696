// Package buildinfo says which nbdscope this is: the module version and
// VCS revision the Go toolchain stamped into the binary, the Go version
// and the platform. Nothing here is hard-coded, so a report always names
// the build that measured it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what the binary knows about its own build.
type Info struct {
	Version  string `json:"version"`  // module version, "(devel)" when unstamped
	Revision string `json:"revision"` // VCS commit, "" when unknown (go test, go run)
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a tree with local changes
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// Read reads the build information of the running binary.
func Read() Info {
	in := Info{Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	return fromBuildInfo(bi, in)
}

func fromBuildInfo(bi *debug.BuildInfo, in Info) Info {
	if v := bi.Main.Version; v != "" {
		in.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Short is the one-word version that reports carry as nbdscope_version:
// the module version, plus the short revision when the version does not
// already contain it (an unstamped "(devel)" build), plus "+dirty" for a
// modified tree.
func (in Info) Short() string {
	v := in.Version
	if v == "(devel)" || v == "" {
		v = "devel"
	}
	rev := in.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		v += "+" + rev
	}
	if in.Modified && !strings.Contains(v, "dirty") {
		v += "+dirty"
	}
	return v
}

// String is the --version text: version, revision, Go, platform.
func (in Info) String() string {
	rev := in.Revision
	if rev == "" {
		rev = "unknown (built without VCS information)"
	} else if in.Modified {
		rev += " (modified)"
	}
	when := ""
	if in.Time != "" {
		when = "\ncommitted " + in.Time
	}
	return fmt.Sprintf("nbdscope %s\nrevision %s%s\n%s %s/%s\n", in.Short(), rev, when, in.Go, in.OS, in.Arch)
}
