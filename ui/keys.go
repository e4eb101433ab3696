package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap holds the explorer's key bindings. It implements help.KeyMap:
// ShortHelp is the footer, FullHelp the `?` screen. Pairs of bindings
// (+/-, c/C, …) are shown once, under the first of the pair.
type KeyMap struct {
	NextSide key.Binding
	PrevSide key.Binding
	SideA    key.Binding
	SideB    key.Binding

	BufUp    key.Binding
	BufDown  key.Binding
	BufExact key.Binding
	Gap      key.Binding

	ConnDown  key.Binding
	ConnUp    key.Binding
	ReqDown   key.Binding
	ReqUp     key.Binding
	DepthDown key.Binding
	DepthUp   key.Binding
	Workload  key.Binding
	Transport key.Binding
	Placement key.Binding

	Mode    key.Binding
	Pause   key.Binding
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

		BufUp:    b([]string{"+"}, "+/-", "sndbuf up/down"),
		BufDown:  b([]string{"-"}, "-", "sndbuf down"),
		BufExact: b([]string{"="}, "=", "exact sndbuf"),
		Gap:      b([]string{"g"}, "g", "gap: A macos, B 2m"),

		ConnDown:  b([]string{"c"}, "c/C", "connections −/+"),
		ConnUp:    b([]string{"C"}, "C", "connections +"),
		ReqDown:   b([]string{"r"}, "r/R", "request size ½/×2"),
		ReqUp:     b([]string{"R"}, "R", "request size ×2"),
		DepthDown: b([]string{"d"}, "d/D", "in flight ½/×2"),
		DepthUp:   b([]string{"D"}, "D", "in flight ×2"),
		Workload:  b([]string{"w"}, "w", "cycle workload"),
		Transport: b([]string{"t"}, "t", "unix/tcp"),
		Placement: b([]string{"o"}, "o", "cores: split/shared/os"),

		Mode:    b([]string{"m"}, "m", "alternate/concurrent"),
		Pause:   b([]string{" "}, "space", "pause/resume side"),
		Restart: b([]string{"!"}, "!", "restart crashed side"),

		Presets:       b([]string{"p"}, "p", "presets"),
		Save:          b([]string{"s"}, "s", "save preset"),
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
	return []key.Binding{k.NextSide, k.BufUp, k.BufExact, k.Gap, k.Pause, k.ConnDown, k.Charts, k.Presets, k.Baseline, k.Help, k.Quit}
}

// FullHelp is the help screen, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.NextSide, k.Pause, k.Restart, k.Mode, k.Quit},
		{k.BufUp, k.BufExact, k.Gap, k.Transport, k.Workload, k.Placement},
		{k.ConnDown, k.ReqDown, k.DepthDown},
		{k.Latency, k.Charts, k.Clear, k.Presets, k.Save, k.Baseline, k.Help},
	}
}

// modalKeys is the footer of an open prompt or picker.
type modalKeys []key.Binding

func (m modalKeys) ShortHelp() []key.Binding  { return m }
func (m modalKeys) FullHelp() [][]key.Binding { return [][]key.Binding{m} }

var (
	keyEnter  = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply"))
	keyEsc    = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	keyYes    = key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "overwrite"))
	keyNo     = key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "keep it"))
	keyFilter = key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter"))
	keyMove   = key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "move"))
	keyClose  = key.NewBinding(key.WithKeys("esc", "?", "q"), key.WithHelp("esc/?", "close help"))
	keyForce  = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	keyScroll = key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown", "home", "end"), key.WithHelp("↑/↓", "scroll"))
)
