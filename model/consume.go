package model

import (
	"strconv"
)

// ConsumeMode is what the load process does with READ data
// (SideConfig.Consume). How fast the receiver drains the socket decides
// how many receive calls it needs per 2 MiB, and so how much a bigger send
// buffer helps: each mode models a real client of the seed's tables.
// JSON, presets and the command line write its name.
type ConsumeMode string

// Consume modes.
const (
	// ConsumeCopy copies each read once (a client that uses what it reads).
	ConsumeCopy ConsumeMode = "copy"
	// ConsumeScan looks for zeroes like qemu-img convert does before it
	// writes (qemu's buffer_is_zero): it stops at the first non-zero byte.
	ConsumeScan ConsumeMode = "scan"
	// ConsumeHash hashes the stream like blksum and nbdcopy --blkhash.
	ConsumeHash ConsumeMode = "hash"
	// ConsumeNone is a pure sink that drains the socket the instant data
	// arrives, and so reads it in small pieces whatever the buffer.
	ConsumeNone ConsumeMode = "none"
)

// ConsumeModes lists the modes in the order the UI cycles them, each with
// its one-line help (flags, `?` help and docs/cli.md say the same).
var ConsumeModes = []struct {
	Name ConsumeMode
	Help string
}{
	{ConsumeCopy, "copy each read once, as a client that uses its data"},
	{ConsumeScan, "look for zeroes like qemu-img convert (buffer_is_zero: stops at the first non-zero byte); counts zero buffers"},
	{ConsumeHash, "hash like blksum / nbdcopy --blkhash: SHA-256 of each 64 KiB block, then of the digests and length; per pass, the root blksum prints"},
	{ConsumeNone, "a pure sink: drain the socket as data arrives, touch nothing"},
}

func validConsume(m ConsumeMode) bool {
	for _, c := range ConsumeModes {
		if c.Name == m {
			return true
		}
	}
	return false
}

// consumeNames is "copy, scan, hash or none" for error messages.
func consumeNames() string {
	s := ""
	for i, c := range ConsumeModes {
		switch {
		case i == len(ConsumeModes)-1:
			s += " or "
		case i > 0:
			s += ", "
		}
		s += string(c.Name)
	}
	return s
}

// Hash threads (SideConfig.HashThreads): 0 is auto (ResolveHashThreads).
const MaxHashThreads = 64

// ParseHashThreads reads "auto" (0) or a count 1…MaxHashThreads.
func ParseHashThreads(s string) (int, error) {
	if s == "auto" || s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxHashThreads {
		return 0, refused(SetHashThreads, s, "want auto or 1…%d", MaxHashThreads)
	}
	return n, nil
}

func formatHashThreads(n int) string {
	if n == 0 {
		return "auto"
	}
	return strconv.Itoa(n)
}

// ResolveHashThreads is the number of hashing threads a side's load process
// uses: the setting when given, else 1, or — like blkhash, which spreads
// the work over the cores it has — the side's usable cores minus the one
// its server holds (floor 1) when the side is pinned split on a machine
// that gives it more than two.
func ResolveHashThreads(sc SideConfig, mode Mode, allowed []int) int {
	if sc.HashThreads > 0 {
		return sc.HashThreads
	}
	if Place(sc.Get(SetPlacement)) != PlaceSplit {
		return 1
	}
	return max(1, len(sideCPUs(mode, sc.Name, allowed))-1)
}

// sideCPUs are the cores a side may use: all allowed ones in alternate
// mode (the sides take turns), two per side in concurrent mode with four
// or more (PlacementCPUs).
func sideCPUs(mode Mode, name string, allowed []int) []int {
	if mode == ModeConcurrent && len(allowed) >= 4 {
		base := 0
		if name == "B" {
			base = 2
		}
		return allowed[base : base+2]
	}
	return allowed
}

// HashLoadCPUs widens a split side's load process from one core to every
// core of the side but the server's, so its hash threads can run at once.
func HashLoadCPUs(mode Mode, name string, allowed, server []int) []int {
	var out []int
	for _, c := range sideCPUs(mode, name, allowed) {
		if len(server) == 0 || c != server[0] {
			out = append(out, c)
		}
	}
	return out
}

// ConsumeCounts are what a load process's consume mode found, cumulative.
// The summary and JSON report them as they are; a figure a mode does not
// produce stays zero and the root digest empty.
type ConsumeCounts struct {
	ScannedBuffers uint64 `json:"scanned_buffers"` // scan: buffers looked at
	ZeroBuffers    uint64 `json:"zero_buffers"`    // scan: of those, all zeroes
	HashThreads    int    `json:"hash_threads,omitempty"`
	HashBlocks     uint64 `json:"hash_blocks"`        // hash: 64 KiB blocks digested
	HashPasses     uint64 `json:"hash_passes"`        // hash: full passes with a root
	HashBroken     uint64 `json:"hash_broken_passes"` // hash: passes with a hole (no root)
	HashReordered  uint64 `json:"hash_reordered"`     // hash: digests that arrived early
	RootDigest     string `json:"root_digest,omitempty"`
}

// AddBetween adds the counts between a load's poll replies prev and cur to c (a
// side's run total); the root digest is the latest one.
func (c *ConsumeCounts) AddBetween(cur, prev *ConsumeCounts) {
	if cur == nil {
		return
	}
	var p ConsumeCounts
	if prev != nil {
		p = *prev
	}
	c.ScannedBuffers += cur.ScannedBuffers - p.ScannedBuffers
	c.ZeroBuffers += cur.ZeroBuffers - p.ZeroBuffers
	c.HashBlocks += cur.HashBlocks - p.HashBlocks
	c.HashPasses += cur.HashPasses - p.HashPasses
	c.HashBroken += cur.HashBroken - p.HashBroken
	c.HashReordered += cur.HashReordered - p.HashReordered
	c.HashThreads = cur.HashThreads
	if cur.RootDigest != "" {
		c.RootDigest = cur.RootDigest
	}
}

// PassRoot is the root digest of a pass that completed between two poll
// replies, or "".
func PassRoot(cur, prev *ConsumeCounts) string {
	if cur == nil || (prev != nil && cur.HashPasses == prev.HashPasses) || cur.HashPasses == 0 {
		return ""
	}
	return cur.RootDigest
}
