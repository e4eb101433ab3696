package ui

import (
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
)

// pickerKind is what one use of the picker lists: the presets (`p`) or
// the saved runs to draw as a baseline (`b`). The two differ only in these
// words and in the key that opens and closes them; loading, filtering,
// choosing and closing are the picker's own.
type pickerKind struct {
	runs      bool   // the saved runs rather than the presets
	title     string // above the list: what enter does
	one, many string // the status bar's name of an entry and of entries
	loading   string // shown until the entries arrive
	toggle    key.Binding
}

// pickerKeyMap is the picker's keys. Close is esc, q and the key that
// opened the picker; esc clears an applied filter before it closes.
type pickerKeyMap struct {
	Choose key.Binding
	Filter key.Binding
	Move   key.Binding
	Close  key.Binding
}

// keysFor is the key map of a kind: its toggle closes it too.
func keysFor(kind pickerKind) pickerKeyMap {
	closeKeys := append([]string{"esc", "q"}, kind.toggle.Keys()...)
	return pickerKeyMap{
		Choose: keyEnter,
		Filter: keyFilter,
		Move:   keyMove,
		Close:  key.NewBinding(key.WithKeys(closeKeys...), key.WithHelp("esc", "cancel")),
	}
}

// ShortHelp is the footer while the picker is open.
func (k pickerKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Choose, k.Filter, k.Move, k.Close}
}

// FullHelp is the same keys in one column.
func (k pickerKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// picker is the list shown in the chart area, a component as in
// soft-serve's pkg/ui/common: it owns its Update, its KeyMap and its size.
// The root opens it with a kind and what enter does with the chosen entry,
// hands it every key while it is open, and takes it down when open turns
// false.
type picker struct {
	pickerKind
	com     *common
	keys    pickerKeyMap
	list    list.Model
	open    bool
	loading bool
	// choose is what enter does with the selected entry (nil when the
	// list is empty).
	choose func(list.Item) tea.Cmd
	// descLines is the lines each entry's description takes now.
	descLines int
}

func newPicker(com *common) picker {
	d := wrapDelegate{list.NewDefaultDelegate(), 1}
	l := list.New(nil, d, 0, 0)
	l.SetShowHelp(false)
	l.DisableQuitKeybindings()
	p := picker{com: com, list: l, descLines: 1}
	p.use(presetKind)
	return p
}

// use switches the picker to a kind.
func (p *picker) use(kind pickerKind) {
	p.pickerKind = kind
	p.keys = keysFor(kind)
	p.list.Title = kind.title
	p.list.SetStatusBarItemName(kind.one, kind.many)
}

// start opens the picker on a kind, loading until show gives it entries.
func (p *picker) start(kind pickerKind, choose func(list.Item) tea.Cmd) {
	p.use(kind)
	p.choose = choose
	p.open, p.loading = true, true
}

// show lists the entries that arrived, with sel selected and no filter.
func (p *picker) show(items []list.Item, sel int) {
	p.loading = false
	p.list.ResetFilter()
	p.list.SetItems(items)
	p.list.Select(sel)
}

// Update handles a key while the picker is open: enter chooses, Close
// closes, anything else moves or filters the list. Typing a filter takes
// every key, Close's included.
func (p picker) Update(msg tea.Msg) (picker, tea.Cmd) {
	k, isKey := msg.(tea.KeyMsg)
	switch {
	case !isKey:
	case p.loading:
		if key.Matches(k, p.keys.Close) {
			p.open = false
		}
		return p, nil
	case p.list.SettingFilter():
	case key.Matches(k, p.keys.Close):
		if p.list.IsFiltered() && k.String() == "esc" {
			break // esc clears the filter first
		}
		p.open = false
		return p, nil
	case key.Matches(k, p.keys.Choose):
		p.open = false
		sel := p.list.SelectedItem()
		if sel == nil || p.choose == nil {
			return p, nil
		}
		return p, p.choose(sel)
	}
	var cmd tea.Cmd
	p.list, cmd = p.list.Update(msg)
	return p, cmd
}

// SetSize sizes the list, and its entries to their descriptions'
// lines at that width.
func (p *picker) SetSize(w, h int) {
	p.list.SetSize(max(w, 0), max(h, 0))
	lines := 1
	for _, it := range p.list.Items() {
		if di, ok := it.(list.DefaultItem); ok {
			lines = max(lines, len(wrap(di.Description(), descWidth(w), 0)))
		}
	}
	lines = min(lines, maxDescLines)
	if lines != p.descLines {
		d := wrapDelegate{list.NewDefaultDelegate(), lines}
		d.SetHeight(1 + lines)
		p.list.SetDelegate(d)
		p.descLines = lines
	}
}

func (p *picker) View() string {
	if p.loading {
		return p.com.styles.Dim.Render(p.pickerKind.loading)
	}
	return p.list.View()
}

// maxDescLines is how many lines a picker entry's description may take.
const maxDescLines = 3

// descWidth is the width of a description in a list w cells wide (the
// default delegate's two cells of padding or border taken off).
func descWidth(w int) int { return max(w-2, 10) }

// wrapDelegate is the list's default delegate with each description
// word-wrapped onto the entry's lines rather than cut to one.
type wrapDelegate struct {
	list.DefaultDelegate
	lines int
}

func (d wrapDelegate) Render(w io.Writer, m list.Model, index int, item list.Item) {
	if it, ok := item.(list.DefaultItem); ok {
		item = wrappedItem{it, strings.Join(wrap(it.Description(), descWidth(m.Width()), d.lines), "\n")}
	}
	d.DefaultDelegate.Render(w, m, index, item)
}

// wrappedItem is an entry with its description wrapped.
type wrappedItem struct {
	list.DefaultItem
	desc string
}

func (i wrappedItem) Description() string { return i.desc }

// listMsg brings a picker's entries (presets, saved runs) and the error
// of any that could not be read.
type listMsg[T any] struct {
	items []T
	err   error
}

// listing is the command that lists a picker's entries with l, nil
// without one (openPickerOf then says what is missing).
func listing[T any](l func() ([]T, error)) func() tea.Msg {
	if l == nil {
		return nil
	}
	return func() tea.Msg {
		items, err := l()
		return listMsg[T]{items, err}
	}
}

// openPickerOf opens the picker on a kind and starts load, whose message
// brings the entries; without a loader it says what is missing instead.
func (m *Model) openPickerOf(kind pickerKind, choose func(list.Item) tea.Cmd, load func() tea.Msg, missing string) tea.Cmd {
	if load == nil {
		m.setMsg(msgWarn, missing)
		return nil
	}
	m.state = stPicker
	m.picker.start(kind, choose)
	return load
}

// pickerKey hands a key to the open picker and closes the modal state when
// the picker closed.
func (m *Model) pickerKey(k tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	m.picker, cmd = m.picker.Update(k)
	if !m.picker.open {
		m.state = stNormal
	}
	return cmd
}

// closePicker takes the picker down without a choice (nothing to list).
func (m *Model) closePicker() {
	m.picker.open = false
	m.state = stNormal
}
