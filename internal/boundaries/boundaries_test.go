// Package boundaries holds the test that keeps the packages' dependencies
// going one way (docs/architecture.md): the data model below the runtime,
// the controller and the child apart, the readers of runs off the runtime.
// It reads them from `go list -deps -json`, for Linux and for macOS, so an
// import that only one OS's files make is caught too. doctable_test.go
// holds docs/architecture.md's packages table to the same listing.
package boundaries

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "nbdscope/"

// rule is what one package may, or may not, depend on, directly or
// through others. Package names are the module's, without "nbdscope/".
type rule struct {
	pkg string
	// only, when set, is all of ours the package may depend on.
	only []string
	// never are packages it must not depend on; a name ending in "/..."
	// covers the package and every one below it.
	never []string
	why   string
}

var rules = []rule{
	{pkg: "units", only: []string{}, why: "units is the bottom: sizes, rates, ratios"},
	{pkg: "shellword", only: []string{}, why: "splitting and quoting command lines is a bottom of its own"},
	// nbd quotes the path of the command its missing-image error suggests.
	{pkg: "nbd", only: []string{"units", "shellword"}, why: "the NBD protocol knows sizes and nothing of nbdscope"},
	// platform needs nbd for the socket buffers it describes (nbd.SockBuf,
	// nbd.ProbeSocketBuffer, nbd.RequestForEffective).
	{pkg: "platform", only: []string{"units", "nbd", "shellword"}, why: "the OS facts sit under everything that uses them"},
	// probe/ is the kernel instruments, a layer above platform's facts:
	// each instrument reads the OS through platform alone, and realproc
	// ties the three together for one real process.
	{pkg: "probe/syscount", only: []string{"platform", "units", "nbd", "shellword"}, why: "an instrument needs only the OS's facts"},
	{pkg: "probe/sockdiag", only: []string{"platform", "units", "nbd", "shellword"}, why: "an instrument needs only the OS's facts"},
	{pkg: "probe/sockctl", only: []string{"platform", "units", "nbd", "shellword"}, why: "an instrument needs only the OS's facts"},
	{pkg: "probe/schedstat", only: []string{"platform", "units", "nbd", "shellword"}, why: "an instrument needs only the OS's facts"},
	{pkg: "probe/realproc", only: []string{"platform", "probe/syscount", "probe/sockdiag", "probe/sockctl", "units", "nbd", "shellword"},
		why: "measuring a real process needs only the OS's mechanisms"},
	{pkg: "clientrun", only: []string{"platform", "units", "nbd", "shellword"}, why: "running a real client needs only the OS"},
	// model holds what a run is. Beyond nbd (URIs) and units it reaches
	// four leaves, none of which imports anything above it: platform (a
	// Report records the machine's platform.Facts; the default placement
	// and the macOS buffer request depend on the machine), clientrun (a
	// sweep's ExecRun embeds a client run's clientrun.Result), shellword
	// (Validate splits an exec command line) and buildinfo (the
	// version a report records), and stats, the one definition of a
	// spread and of "within noise" (a leaf itself).
	{pkg: "model", only: []string{"nbd", "units", "seed", "stats", "platform", "clientrun", "shellword", "internal/buildinfo"},
		why: "the data model imports no runtime"},
	{pkg: "seed", only: []string{}, why: "the series' published tables are data, below everything"},
	// phrase, the phrasebook, words what the model holds: it imports the
	// model, never the other way (model's rule above leaves it out), and
	// nothing above the model, so every reader of runs may word them.
	{pkg: "phrase", never: []string{"engine/...", "sweep", "presets", "report", "plot", "ui", "servestats", "probe/...", "cmd/..."},
		why: "the phrasebook words the model's kinds and needs nothing above the model"},
	{pkg: "report", only: []string{"model", "phrase", "seed", "stats", "nbd", "units", "platform", "clientrun", "shellword", "internal/buildinfo"},
		why: "the tables are rendered from the model alone, so runs show needs no runtime"},
	// engine/meter is a side's accounting: readings in, figures out. It
	// starts, polls and reads nothing, so its tests need no child.
	{pkg: "engine/meter", never: []string{"engine", "engine/child", "engine/wire", "engine/childproc", "probe/...", "sweep"},
		why: "the accounting imports no process code: no child, no protocol, no instrument"},
	{pkg: "engine/wire", never: []string{"engine", "engine/child"}, why: "the protocol lies below both of its ends"},
	{pkg: "engine", never: []string{"engine/child", "sweep"}, why: "the controller reaches its children only through engine/wire"},
	{pkg: "engine/child", never: []string{"engine", "sweep"}, why: "a child knows the protocol, not the controller"},
	{pkg: "sweep", never: []string{"engine/child"}, why: "a sweep runs children through the engine"},
	{pkg: "plot", never: []string{"engine/...", "sweep"}, why: "charts are drawn from the model, not the runtime"},
	{pkg: "presets", never: []string{"engine/...", "sweep"}, why: "presets and the runs store read and write the model"},
	{pkg: "servestats", never: []string{"engine/...", "sweep"}, why: "serve --stats prints the model's figures"},
}

func TestBoundaries(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			g := listPackages(t, goos)
			for _, r := range rules {
				for _, v := range r.check(g) {
					t.Errorf("%s (GOOS=%s): %s; %s", r.pkg, goos, v, r.why)
				}
			}
		})
	}
}

// graph is the module's packages by name (without "nbdscope/"), each with
// the packages of ours it imports directly.
type graph map[string][]string

// check returns a line for each dependency the rule forbids, with the
// chain of imports that brings it in.
func (r rule) check(g graph) []string {
	if _, ok := g[r.pkg]; !ok {
		return []string{"no such package in the module: the rule is out of date"}
	}
	var out []string
	for dep, chain := range reach(g, r.pkg) {
		if dep == r.pkg {
			continue
		}
		bad := r.only != nil && !slices.Contains(r.only, dep)
		for _, n := range r.never {
			bad = bad || dep == n || strings.HasSuffix(n, "/...") && (dep == strings.TrimSuffix(n, "/...") || strings.HasPrefix(dep, strings.TrimSuffix(n, "...")))
		}
		if bad {
			out = append(out, fmt.Sprintf("imports %s%s (%s)", mod, dep, strings.Join(chain, " → ")))
		}
	}
	slices.Sort(out)
	return out
}

// reach is every package that from depends on, with the shortest chain of
// imports that leads there.
func reach(g graph, from string) map[string][]string {
	chains := map[string][]string{from: {from}}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g[p] {
			if _, seen := chains[q]; !seen {
				chains[q] = append(slices.Clone(chains[p]), q)
				queue = append(queue, q)
			}
		}
	}
	return chains
}

// listPackages reads the module's packages and their imports, as built
// for goos, from `go list -deps -json ./...` run at the module's root.
func listPackages(t *testing.T, goos string) graph {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	root, err := exec.Command(gobin, "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(root)) == "" {
		t.Fatalf("finding the module's root (go env GOMOD): %v %s", err, root)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	cmd.Env = append(cmd.Environ(), "GOOS="+goos)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./... (GOOS=%s): %v\n%s", goos, err, stderr.String())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(outb))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		name, ours := strings.CutPrefix(p.ImportPath, mod)
		if !ours {
			continue
		}
		var imps []string
		for _, i := range p.Imports {
			if n, ok := strings.CutPrefix(i, mod); ok {
				imps = append(imps, n)
			}
		}
		g[name] = imps
	}
	return g
}
