package e2e

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sideView is what a side's panel shows (ui/panel.go), read off the
// screen. Figures not shown are NaN.
type sideView struct {
	title          string
	pending        bool    // "applying…": a change is on its way
	rate           float64 // bytes/s
	sndReq, sndEff string  // server SO_SNDBUF requested and effective
	clamped        bool
	// The buffer the buffer keys step, named on the panel's first line
	// ("client sndbuf 2m → 4m eff"; "sndbuf" for the server's alone).
	stepped, stepReq, stepEff string
	conns                     int
	cpuCli, cpuSrv            float64 // cores busy
	body                      []string
}

func (v sideView) String() string {
	return fmt.Sprintf("rate %.0f B/s, sndbuf %s → %s eff, %d conns, cpu %.2f cli + %.2f srv, pending %v",
		v.rate, v.sndReq, v.sndEff, v.conns, v.cpuCli, v.cpuSrv, v.pending)
}

var (
	// "rate    2.43 GiB/s · …" (narrow) or "throughput  2.43 GiB/s" (wide).
	reRate = regexp.MustCompile(`(?:^|\s)(?:rate|throughput)\s+(n/a|[0-9.]+ (?:B|KiB|MiB|GiB|TiB)/s)`)
	// "sndbuf  64k → 128k eff" (narrow) or "server sndbuf 64k → 128k eff".
	reSndBuf = regexp.MustCompile(`^(?:server )?sndbuf\s+(\S+) → (\S+) eff( clamped)?`)
	// The first buffer line: "client sndbuf 64k → 128k eff", in either width.
	reStepped = regexp.MustCompile(`^(sndbuf|server sndbuf|client sndbuf|client rcvbuf|srv\+cli sndbuf)\s+(\S+) → (\S+) eff`)
	// "load    2 conns · 8×2m · read · unix" or "connections   2".
	reConns = regexp.MustCompile(`^(?:load\s+(\d+) conns?\b|connections\s+(\d+)\b)`)
	// "cores   0.50 cli + 0.58 srv · split" (narrow).
	reCPU = regexp.MustCompile(`^cores\s+(n/a|[0-9.]+) cli \+ (n/a|[0-9.]+) srv · (split|shared|os)`)
	// "cpu client  0.43 cores · …", "cpu server  0.53 cores · …" (wide).
	reCPUCli = regexp.MustCompile(`(?:^|\s)cpu client\s+(n/a|[0-9.]+) cores`)
	reCPUSrv = regexp.MustCompile(`(?:^|\s)cpu server\s+(n/a|[0-9.]+) cores`)
)

// panels reads both side panels of a screen w cells wide. From 60 columns
// the explorer draws them side by side, A in the left half and B in the
// right one, each a box whose title is in the top border. It also checks
// that each body row starts and ends with the box's border, which a row
// drawn too wide would break.
func panels(rows []string, w int) ([2]sideView, error) {
	var out [2]sideView
	if w < 60 {
		return out, fmt.Errorf("panels are side by side from 60 columns only, not %d", w)
	}
	half := w / 2
	cut := func(row string, i int) []rune {
		r := []rune(row)
		for len(r) < w {
			r = append(r, ' ')
		}
		if i == 0 {
			return r[:half]
		}
		return r[half:w]
	}
	for i := range out {
		top, bottom := -1, -1
		for n, row := range rows {
			c := cut(row, i)
			if top < 0 && (c[0] == '┏' || c[0] == '╭') {
				top = n
				continue
			}
			if top >= 0 && (c[0] == '┗' || c[0] == '╰') {
				bottom = n
				break
			}
		}
		if top < 0 || bottom < 0 {
			return out, fmt.Errorf("side %c: no panel box", 'A'+i)
		}
		v := sideView{rate: math.NaN(), cpuCli: math.NaN(), cpuSrv: math.NaN()}
		v.title = strings.TrimSpace(string(cut(rows[top], i)))
		v.pending = strings.Contains(v.title, "applying")
		for n := top + 1; n < bottom; n++ {
			c := cut(rows[n], i)
			first, last := c[0], c[len(c)-1]
			if (first != '┃' && first != '│') || last != first {
				return out, fmt.Errorf("side %c: row %d is not inside the box: %q", 'A'+i, n, string(c))
			}
			v.body = append(v.body, strings.TrimSpace(string(c[1:len(c)-1])))
		}
		if last := []rune(v.title); last[len(last)-1] != '┓' && last[len(last)-1] != '╮' {
			return out, fmt.Errorf("side %c: title row does not end the box: %q", 'A'+i, v.title)
		}
		if err := v.parse(); err != nil {
			return out, fmt.Errorf("side %c: %v\n%s", 'A'+i, err, strings.Join(v.body, "\n"))
		}
		out[i] = v
	}
	return out, nil
}

func (v *sideView) parse() error {
	found := map[string]bool{}
	for _, l := range v.body {
		if m := reRate.FindStringSubmatch(l); m != nil {
			r, err := parseRate(m[1])
			if err != nil {
				return err
			}
			v.rate, found["rate"] = r, true
		}
		if m := reSndBuf.FindStringSubmatch(l); m != nil {
			v.sndReq, v.sndEff, v.clamped, found["sndbuf"] = m[1], m[2], m[3] != "", true
		}
		if m := reStepped.FindStringSubmatch(l); m != nil && v.stepped == "" {
			v.stepped, v.stepReq, v.stepEff, found["sndbuf"] = m[1], m[2], m[3], true
		}
		if m := reConns.FindStringSubmatch(l); m != nil {
			v.conns, _ = strconv.Atoi(m[1] + m[2])
			found["connections"] = true
		}
		if m := reCPU.FindStringSubmatch(l); m != nil {
			v.cpuCli, v.cpuSrv = parseFig(m[1]), parseFig(m[2])
			found["cpu"] = true
		}
		if m := reCPUCli.FindStringSubmatch(l); m != nil {
			v.cpuCli, found["cpu"] = parseFig(m[1]), true
		}
		if m := reCPUSrv.FindStringSubmatch(l); m != nil {
			v.cpuSrv = parseFig(m[1])
		}
	}
	for _, k := range []string{"rate", "sndbuf", "connections", "cpu"} {
		if !found[k] {
			return fmt.Errorf("no %s figure in the panel", k)
		}
	}
	return nil
}

// parseRate reads "2.43 GiB/s" as bytes/s; n/a is NaN.
func parseRate(s string) (float64, error) {
	if s == "n/a" {
		return math.NaN(), nil
	}
	num, unit, ok := strings.Cut(s, " ")
	if !ok {
		return 0, fmt.Errorf("rate %q", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %v", s, err)
	}
	mult := map[string]float64{"B/s": 1, "KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30, "TiB/s": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("rate %q: unit", s)
	}
	return f * mult, nil
}

func parseFig(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// TestPanelsParse checks the screen reader on screens the explorer drew
// (ui's golden files), narrow and wide panels.
func TestPanelsParse(t *testing.T) {
	narrow := []string{
		"nbdscope  mode alternate  preset linux-gap*                      stopping…  0:42",
		"┏━ ▸ A ● running ━━━━━━━━━━━━━━━━━━━━━━┓╭─ B ● running · applying… ───────────╮",
		"┃ sndbuf  64k → 128k eff               ┃│ sndbuf  2m → 416k eff clamped        │",
		"┃ load    2 conns · 8×2m · read · unix ┃│ load    1 conn · 8×2m · read · unix  │",
		"┃ rate    1.10 GiB/s · 0.99 cpu s/GiB  ┃│ rate    n/a · n/a cpu s/GiB          │",
		"┃ calls   16.4 per 2MiB (client recv)  ┃│ calls   5.10 per 2MiB (client recv)  │",
		"┃ cores   0.92 cli + 0.58 srv · split  ┃│ cores   0.71 cli + n/a srv · os      │",
		"┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛╰──────────────────────────────────────╯",
	}
	p, err := panels(narrow, 80)
	if err != nil {
		t.Fatal(err)
	}
	a, b := p[0], p[1]
	if a.sndReq != "64k" || a.sndEff != "128k" || a.clamped || a.conns != 2 || a.rate != 1.10*(1<<30) || a.cpuCli != 0.92 || a.cpuSrv != 0.58 || a.pending {
		t.Errorf("narrow A: %v", a)
	}
	if b.sndReq != "2m" || b.sndEff != "416k" || !b.clamped || b.conns != 1 || !math.IsNaN(b.rate) || b.cpuCli != 0.71 || !math.IsNaN(b.cpuSrv) || !b.pending {
		t.Errorf("narrow B: %v", b)
	}

	wide := []string{
		"┏━ ▸ A ● running ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓╭─ B ● running ────────────────────────────────────────────────────────────────╮",
		"┃ server sndbuf 64k → 128k eff           throughput  1012.4 MiB/s              ┃│ server sndbuf 2m → 4m eff              throughput  3.00 GiB/s                │",
		"┃ client sndbuf default → 208k eff       recv calls  16.4 per 2 MiB (client)   ┃│ client sndbuf default → 208k eff       recv calls  5.10 per 2 MiB (client)   │",
		"┃ connections   2                        cpu client  0.92 cores · 0.61 s/GiB   ┃│ connections   1                        cpu client  0.71 cores · 0.18 s/GiB   │",
		"┃ request size  2m                       cpu server  0.58 cores · 0.38 s/GiB   ┃│ request size  2m                       cpu server  0.35 cores · 0.09 s/GiB   │",
		"┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛╰──────────────────────────────────────────────────────────────────────────────╯",
	}
	p, err = panels(wide, 160)
	if err != nil {
		t.Fatal(err)
	}
	a, b = p[0], p[1]
	if a.sndReq != "64k" || a.sndEff != "128k" || a.conns != 2 || a.rate != 1012.4*(1<<20) || a.cpuCli != 0.92 || a.cpuSrv != 0.58 {
		t.Errorf("wide A: %v", a)
	}
	if b.sndReq != "2m" || b.sndEff != "4m" || b.conns != 1 || b.rate != 3*(1<<30) || b.cpuCli != 0.71 || b.cpuSrv != 0.35 {
		t.Errorf("wide B: %v", b)
	}

	broken := append([]string(nil), narrow...)
	broken[2] = "┃ sndbuf  64k → 128k eff                ┃│ sndbuf  2m → 416k eff clamped        "
	if _, err := panels(broken, 80); err == nil {
		t.Error("a row that does not close its box was accepted")
	}
}
