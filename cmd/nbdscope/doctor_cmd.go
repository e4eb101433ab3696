package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/clientrun"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/phrase"
	"nbdscope/platform"
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
	// PageFaultUs is what a minor page fault costs here (platform.FaultCost),
	// null where it is not measured.
	PageFaultUs *float64 `json:"page_fault_us"`
	// SyscallCounts: whether a real process's socket calls can be
	// counted here, and if not why and the fix (doctor_real.go).
	SyscallCounts doctorCalls `json:"syscall_counts"`
	// KernelFill: whether fill is measured in the kernel here, and if not
	// why, with the verifier's log where it refused a program.
	KernelFill doctorKernelFill `json:"kernel_fill"`
	// BufferFill is the fill probe's result (doctor_fill.go), null when it
	// could not run; BufferFillNA says why.
	BufferFill   *doctorFill `json:"buffer_fill"`
	BufferFillNA string      `json:"buffer_fill_na,omitempty"`
}

func newDoctorCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Platform socket-buffer facts, limits and fixes",
		Long: `Probe this machine's socket buffers (defaults, the largest grant, whether
the kernel doubles requests), where the pair's processes can run, and say
how to lift a limit that would hide the send-buffer effect. A short run of
the default pair (the OS default send buffer against 2 MiB, a turn each:
about 2 s, at most 15 s on a loaded machine) then says how full each
buffer was, who waited on whom, and the client's receive calls per 2 MiB
at each.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.doctor(asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the facts as JSON (version 1, see docs/cli.md)")
	return cmd
}

func (a *app) doctor(asJSON bool) error {
	f := platform.Probe()
	ctx, stop := signalContext()
	defer stop()
	fill, fillErr := probeFill(ctx)
	if ctx.Err() != nil {
		return exitError{exitInterrupted, fmt.Errorf("doctor: interrupted during the buffer-fill probe")}
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		d := doctorJSON{Version: DoctorVersion, Nbdscope: model.Version, Facts: f, Clients: clientrun.Clients(), SyscallCounts: probeCalls(), KernelFill: probeKernelFill()}
		if per, ok := platform.FaultCost(); ok {
			us := float64(per.Nanoseconds()) / 1e3
			d.PageFaultUs = &us
		}
		d.BufferFill = fill
		if fillErr != nil {
			d.BufferFillNA = fillErr.Error()
		}
		return enc.Encode(d)
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
	fmt.Fprintln(out, macOSEmulationLine(f, mac))
	fmt.Fprintln(out, clientrun.ClientsLine(clientrun.Clients()))
	fmt.Fprintln(out, callsLine(probeCalls()))
	fmt.Fprintln(out, kernelFillLine(probeKernelFill()))
	if per, measured := platform.FaultCost(); measured {
		fmt.Fprintln(out, faultLine(per))
	}
	printFill(out, fill, fillErr)
	if fill != nil {
		fmt.Fprintln(out, "\n"+phrase.Gap(fill.Verdict, ok))
	} else if !ok {
		fmt.Fprintln(out, "\nThis machine cannot show the full effect: the ✗ lines above say why.")
	}
	return nil
}

// macOSEmulationLine is doctor's line on the macOS emulation: the 8 KiB
// a request gives (mac, effective), and off a Mac that it is this kernel
// with macOS's buffer, not XNU, with the series' figure from a real Mac.
func macOSEmulationLine(f platform.Facts, mac int) string {
	note := ""
	if e := model.MacOSEmulationFor(f, model.WorkRead); e != nil {
		note = ": " + phrase.MacOSEmulationNote(*e)
	}
	return fmt.Sprintf("✓ macOS emulation: requesting %s gives an effective %s (macOS default 8k)%s", units.FormatSize(int64(platform.MacOSRequest())), units.FormatSize(int64(mac)), note)
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
	load, server := model.PlacementCPUs(model.PlaceSplit, model.ModeAlternate, 0, f.AllowedCPUs)
	return fmt.Sprintf("✓ cpu placement: split by default — load process on cpu %d, server on cpu %d (usable cpus %s; --placement shared|os to change)",
		load[0], server[0], cpus), true
}

// faultDear is the fault cost from which doctor warns: four times bare
// metal's, where a process that faults its buffers in per request starts
// to be bound by that.
const faultDear = 2 * time.Microsecond

// faultLine says what a page fault costs here and what that costs a
// process that faults a fresh buffer in for each request (512 faults per
// 2 MiB; 262,144 per GiB).
func faultLine(per time.Duration) string {
	perGiB := per.Seconds() * float64(1<<30/4096)
	what := fmt.Sprintf("page faults: %.1f µs each (%d MiB of fresh memory touched, median of 3)", float64(per.Nanoseconds())/1e3,
		platform.FaultProbeBytes>>20)
	if per < faultDear {
		return fmt.Sprintf("✓ %s: a process that faults a fresh buffer in for each request pays %.2f s per GiB", what, perGiB)
	}
	return fmt.Sprintf("▲ %s, dear (a VM backing its memory lazily?): a process that faults a fresh buffer in for each request "+
		"(qemu-nbd 7.2 as shipped does) pays %.1f s per GiB here, which then sets its pace whatever its socket buffer; "+
		"'page faults/2MiB' in run, the exec sweep's table and the explorer show who does", what, perGiB)
}
