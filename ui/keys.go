package ui

import (
	"github.com/charmbracelet/bubbles/key"

	"nbdscope/model"
)

// KeyMap holds the explorer's key bindings. It implements help.KeyMap:
// ShortHelp is the footer, FullHelp the `?` screen. Pairs of bindings
// (+/-, c/C, …) are shown once, under the first of the pair. The keys that
// step a setting (c/C, r/R, w, m, space …) are not listed here: they come
// from the settings table (model.Settings), with their labels.
type KeyMap struct {
	NextSide key.Binding
	PrevSide key.Binding
	SideA    key.Binding
	SideB    key.Binding

	// The buffer keys act on the bulk sender's send buffer (BufTarget
	// picks another).
	BufUp     key.Binding
	BufDown   key.Binding
	BufExact  key.Binding
	BufTarget key.Binding
	Gap       key.Binding
	// Exec prompts for a real client command as the side's load; Server
	// for a real server command as the side's server.
	Exec   key.Binding
	Server key.Binding

	// Settings step a setting each, built from the settings table.
	Settings []SettingKey

	Restart key.Binding

	Presets       key.Binding
	Save          key.Binding
	Baseline      key.Binding
	ClearBaseline key.Binding
	Clear         key.Binding
	Latency       key.Binding
	Charts        key.Binding

	Help key.Binding
	Quit key.Binding
}

// SettingKey steps Setting by Dir (+1 up, -1 down; a cycling setting
// ignores it) when its key is pressed.
type SettingKey struct {
	key.Binding
	Setting *model.Setting
	Dir     int
}

// settingKeys builds the bindings of every setting the table gives keys:
// down and up for a pair (the down key carries the pair's help), one key
// for a setting that cycles.
func settingKeys() []SettingKey {
	var out []SettingKey
	for _, st := range model.Settings() {
		down, up := st.Keys[0], st.Keys[1]
		if down == "" {
			continue
		}
		label := down
		if down == " " {
			label = "space"
		}
		if up == "" {
			out = append(out, SettingKey{key.NewBinding(key.WithKeys(down), key.WithHelp(label, st.KeyHelp)), st, 1})
			continue
		}
		out = append(out,
			SettingKey{key.NewBinding(key.WithKeys(down), key.WithHelp(label+"/"+up, st.KeyHelp)), st, -1},
			SettingKey{key.NewBinding(key.WithKeys(up), key.WithHelp(up, st.KeyHelp)), st, 1})
	}
	return out
}

// Setting is the (first) binding of a setting, for help lists.
func (k KeyMap) Setting(name string) key.Binding {
	for _, sk := range k.Settings {
		if sk.Setting.Name == name {
			return sk.Binding
		}
	}
	return key.NewBinding(key.WithDisabled())
}

// DefaultKeyMap returns the explorer's bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		NextSide: b([]string{"tab"}, "tab/1/2", "pick side"),
		PrevSide: b([]string{"shift+tab"}, "shift+tab", "previous side"),
		SideA:    b([]string{"1"}, "1", "side A"),
		SideB:    b([]string{"2"}, "2", "side B"),

		BufUp:     b([]string{"+"}, "+/-", "buffer a rung up/down"),
		BufDown:   b([]string{"-"}, "-", "sndbuf down"),
		BufExact:  b([]string{"="}, "=", "exact buffer size"),
		BufTarget: b([]string{"k"}, "k", "+/- = act on: sender/srv/cli snd/rcv"),
		Gap:       b([]string{"g"}, "g", "gap: A macos, B 2m"),
		Exec:      b([]string{"e"}, "e", "real client as load"),
		Server:    b([]string{"S"}, "S", "real server as server"),

		Settings: settingKeys(),

		Restart: b([]string{"!"}, "!", "restart crashed side"),

		Presets:       b([]string{"p"}, "p", "presets"),
		Save:          b([]string{"s"}, "s", "save preset + run file"),
		Baseline:      b([]string{"b"}, "b/B", "baseline: saved run / clear"),
		ClearBaseline: b([]string{"B"}, "B", "clear baseline"),
		Clear:         b([]string{"x"}, "x", "clear charts"),
		Latency:       b([]string{"l"}, "l", "latency chart"),
		Charts:        b([]string{"v"}, "v", "next charts"),

		Help: b([]string{"?"}, "?", "help"),
		Quit: b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// ShortHelp is the footer line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextSide, k.BufUp, k.BufExact, k.Gap, k.Setting(model.SetPaused), k.Setting(model.SetConnections),
		k.Charts, k.Presets, k.Baseline, k.Help, k.Quit}
}

// FullHelp is the help screen, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	s := k.Setting
	return [][]key.Binding{
		{k.NextSide, s(model.SetPaused), k.Restart, s(model.SetMode), k.Quit},
		{k.BufUp, k.BufExact, k.BufTarget, k.Gap, s(model.SetTransport), s(model.SetWorkload), s(model.SetPlacement)},
		{s(model.SetConnections), s(model.SetRequestSize), s(model.SetInFlight), k.Exec, k.Server},
		{k.Latency, k.Charts, k.Clear, k.Presets, k.Save, k.Baseline, k.Help},
	}
}

// modalKeys is the footer of an open prompt or picker.
type modalKeys []key.Binding

func (m modalKeys) ShortHelp() []key.Binding  { return m }
func (m modalKeys) FullHelp() [][]key.Binding { return [][]key.Binding{m} }

var (
	keyEnter    = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply"))
	keyEsc      = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	keyYes      = key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "overwrite"))
	keyNo       = key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "keep it"))
	keyFilter   = key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter"))
	keyMove     = key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "move"))
	keyClose    = key.NewBinding(key.WithKeys("esc", "?"), key.WithHelp("esc/?", "close help"))
	keyForce    = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	keyHelpPage = key.NewBinding(key.WithKeys("tab", "shift+tab", "left", "right"), key.WithHelp("tab", "keys/figures"))
	keyScroll   = key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown", "home", "end"), key.WithHelp("↑/↓", "scroll"))
)
