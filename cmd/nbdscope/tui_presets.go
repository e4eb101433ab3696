package main

import (
	"errors"
	"fmt"

	"nbdscope/model"
	"nbdscope/presets"
	"nbdscope/ui"
)

// tuiPresets fills the explorer's preset hooks (the p and s keys) and the
// baseline hooks (the b key) from the store; without a store those keys say
// presets are not available.
func (a *app) tuiPresets(o *ui.Options) {
	st, err := a.openStore()
	if err != nil {
		return // the keys then say presets are not available
	}
	o.LoadPresets = func() ([]ui.PresetItem, error) {
		ps, errs := st.Presets()
		var items []ui.PresetItem
		for _, p := range ps {
			if p.SweepsClient() {
				continue // a real client's sweep: 'nbdscope sweep --preset NAME'
			}
			items = append(items, ui.PresetItem{Name: p.Name, Description: p.Description, BuiltIn: p.BuiltIn, Config: p.Config})
		}
		return items, errors.Join(errs...)
	}
	save := func(force bool) ui.SaveFunc {
		return func(name string, cfg model.Config, _ string) error {
			err := st.SavePreset(presets.Preset{Name: name, Description: "saved from the explorer", Config: cfg}, force)
			if errors.Is(err, presets.ErrExists) {
				return fmt.Errorf("%w: %w", ui.ErrPresetExists, err)
			}
			return err
		}
	}
	o.SavePreset, o.OverwritePreset = save(false), save(true)
	// The b key: a saved run as the charts' baseline.
	o.LoadRuns = func() ([]ui.RunItem, error) {
		runs, errs := st.Runs()
		var items []ui.RunItem
		for _, r := range runs {
			if r.Sweep != nil {
				continue // rows per buffer, no series over time to draw
			}
			it := ui.RunItem{Name: r.Name, Time: r.Time, Preset: r.Preset,
				Throughput: [2]model.Figure{model.Unknown, model.Unknown}}
			for k := 0; k < len(r.Sides) && k < 2; k++ {
				it.Throughput[k] = r.Sides[k].ThroughputBps
			}
			items = append(items, it)
		}
		return items, errors.Join(errs...)
	}
	o.LoadRun = func(name string) (model.Report, error) {
		rf, err := st.Run(name)
		if err != nil {
			return model.Report{}, err
		}
		return rf.Report, nil
	}
}
