package clientrun

import (
	"os/exec"
	"strings"
)

// Client is a real NBD client that the exec presets run, as found on
// this machine.
type Client struct {
	Name string `json:"name"`
	Path string `json:"path,omitempty"` // empty when not found
	// Note says what is missing: nbdcopy without --blkhash.
	Note string `json:"note,omitempty"`
}

// Clients looks up the clients of the exec presets on PATH.
func Clients() []Client {
	var cs []Client
	for _, name := range []string{"qemu-img", "nbdcopy", "blksum"} {
		c := Client{Name: name}
		if p, err := exec.LookPath(name); err == nil {
			c.Path = p
			if name == "nbdcopy" && !Supports(p, "--blkhash") {
				c.Note = "no --blkhash in this version: the nbdcopy-blkhash preset runs plain 'nbdcopy {uri} null:'"
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// ClientsLine is doctor's line: which clients sweep --exec presets can use.
func ClientsLine(cs []Client) string {
	var parts []string
	for _, c := range cs {
		switch {
		case c.Path == "":
			parts = append(parts, c.Name+" not found")
		case c.Note != "":
			parts = append(parts, c.Name+" ("+c.Note+")")
		default:
			parts = append(parts, c.Name)
		}
	}
	return "clients for 'sweep --exec' presets: " + strings.Join(parts, ", ")
}
