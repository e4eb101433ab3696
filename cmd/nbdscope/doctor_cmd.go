package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"nbdscope/engine"
	"nbdscope/engine/platform"
	"nbdscope/nbd"
	"nbdscope/units"
)

func init() {
	extraCommands["doctor"] = cmdDoctor
}

func cmdDoctor(args []string) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the facts as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f := platform.Probe()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(f)
	}
	sz := func(n int) string { return units.FormatSize(int64(n)) }
	fmt.Printf("%s/%s, %s, %d cores", f.OS, f.Arch, f.Kernel, f.Cores)
	if f.CPUModel != "" {
		fmt.Printf(", %s", f.CPUModel)
	}
	fmt.Println()
	fmt.Printf("unix socket: SO_SNDBUF default %s, SO_RCVBUF default %s, largest SO_SNDBUF granted %s\n",
		sz(f.UnixSndbufDefault), sz(f.UnixRcvbufDefault), sz(f.UnixSndbufMax))
	fmt.Printf("tcp socket:  SO_SNDBUF default %s, SO_RCVBUF default %s\n", sz(f.TCPSndbufDefault), sz(f.TCPRcvbufDefault))
	var names []string
	for k := range f.Limits {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Printf("  %s = %d (%s)\n", k, f.Limits[k], sz(f.Limits[k]))
	}
	if f.Doubles {
		fmt.Println("This kernel doubles every SO_SNDBUF/SO_RCVBUF request (socket(7)): asking for 2m shows as 4m.")
	}
	fmt.Println()
	fmt.Println(limitLine(f.SndbufLimit))
	fmt.Println()
	ok := true
	for _, want := range []int{2 << 20, 4 << 20} {
		line, granted, err := doctorProbe(f.SndbufLimit, want)
		if err != nil {
			return err
		}
		fmt.Println(line)
		ok = ok && granted
	}
	line, placeOK := placementLine(f)
	fmt.Println(line)
	ok = ok && placeOK
	_, mac, _ := nbd.ProbeSocketBuffer("unix", nbd.SendBuf, platform.MacOSRequest())
	fmt.Printf("✓ macOS emulation: requesting %s gives an effective %s (macOS default 8k)\n", sz(platform.MacOSRequest()), sz(mac))
	if ok {
		fmt.Println("\nThis machine can show the full effect: try 'nbdscope' or 'nbdscope run'.")
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
