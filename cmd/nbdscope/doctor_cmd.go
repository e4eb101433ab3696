package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"nbdscope/clientrun"
	"nbdscope/engine"
	"nbdscope/engine/platform"
	"nbdscope/nbd"
	"nbdscope/units"
)

// DoctorVersion is the schema version of 'doctor --json'.
const DoctorVersion = 1

// doctorJSON is what 'doctor --json' prints: the platform facts, with the
// schema version and the nbdscope build that probed them.
type doctorJSON struct {
	Version  int    `json:"version"`
	Nbdscope string `json:"nbdscope_version"`
	platform.Facts
	// Clients are the real clients the exec presets run, found or not.
	Clients []clientrun.Client `json:"clients"`
}

func newDoctorCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Platform socket-buffer facts, limits and fixes",
		Long: `Probe this machine's socket buffers (defaults, the largest grant, whether
the kernel doubles requests), where the pair's processes can run, and say
how to lift a limit that would hide the send-buffer effect.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.doctor(asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the facts as JSON (version 1, see the README)")
	return cmd
}

func (a *app) doctor(asJSON bool) error {
	f := platform.Probe()
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doctorJSON{Version: DoctorVersion, Nbdscope: engine.Version, Facts: f, Clients: clientrun.Clients()})
	}
	out := a.stdout
	sz := func(n int) string { return units.FormatSize(int64(n)) }
	fmt.Fprintf(out, "%s/%s, %s, %d cores", f.OS, f.Arch, f.Kernel, f.Cores)
	if f.CPUModel != "" {
		fmt.Fprintf(out, ", %s", f.CPUModel)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "unix socket: SO_SNDBUF default %s, SO_RCVBUF default %s, largest SO_SNDBUF granted %s\n",
		sz(f.UnixSndbufDefault), sz(f.UnixRcvbufDefault), sz(f.UnixSndbufMax))
	fmt.Fprintf(out, "tcp socket:  SO_SNDBUF default %s, SO_RCVBUF default %s\n", sz(f.TCPSndbufDefault), sz(f.TCPRcvbufDefault))
	var names []string
	for k := range f.Limits {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(out, "  %s = %d (%s)\n", k, f.Limits[k], sz(f.Limits[k]))
	}
	if f.Doubles {
		fmt.Fprintln(out, "This kernel doubles every SO_SNDBUF/SO_RCVBUF request (socket(7)): asking for 2m shows as 4m.")
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, limitLine(f.SndbufLimit))
	fmt.Fprintln(out)
	ok := true
	for _, want := range []int{2 << 20, 4 << 20} {
		line, granted, err := doctorProbe(f.SndbufLimit, want)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, line)
		ok = ok && granted
	}
	line, placeOK := placementLine(f)
	fmt.Fprintln(out, line)
	ok = ok && placeOK
	_, mac, _ := nbd.ProbeSocketBuffer("unix", nbd.SendBuf, platform.MacOSRequest())
	fmt.Fprintf(out, "✓ macOS emulation: requesting %s gives an effective %s (macOS default 8k)\n", sz(platform.MacOSRequest()), sz(mac))
	fmt.Fprintln(out, clientrun.ClientsLine(clientrun.Clients()))
	if ok {
		fmt.Fprintln(out, "\nThis machine can show the full effect: try 'nbdscope' or 'nbdscope run'.")
	}
	return nil
}

// placementLine says where the pair will run its processes and why that
// matters: a small send buffer costs a cross-core wake-up per refill only
// when server and client sit on different cores.
func placementLine(f platform.Facts) (line string, ok bool) {
	cpus := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(f.AllowedCPUs)), ","), "[]")
	switch {
	case !f.CanPin:
		return fmt.Sprintf("• cpu placement: %s cannot hold a process to a core; the scheduler places server and client (placement os)", f.OS), true
	case len(f.AllowedCPUs) < 2:
		return fmt.Sprintf("✗ cpu placement: this process may use only cpu %s; server and client share it, which hides most of the send-buffer effect", cpus), false
	}
	load, server := engine.PlacementCPUs(engine.PlaceSplit, engine.ModeAlternate, 0, f.AllowedCPUs)
	return fmt.Sprintf("✓ cpu placement: split by default — load process on cpu %d, server on cpu %d (usable cpus %s; --placement shared|os to change)",
		load[0], server[0], cpus), true
}
