package engine

import (
	"fmt"

	"nbdscope/model"
	"nbdscope/platform"
)

// place holds the side's processes where its placement says (for mode)
// and records where they are. A process that cannot be held is left to the
// scheduler, with a warning. The caller holds s.change, so the children
// cannot change under it.
func (s *side) place(mode model.Mode) {
	s.mu.Lock()
	sc := s.cfg
	ld, srv := s.load, s.server
	s.mu.Unlock()
	pl := sc.Placement
	if pl == "" {
		pl = model.DefaultPlacement()
	}
	loadCPUs, serverCPUs := model.PlacementCPUs(pl, mode, s.idx, s.p.cpus)
	if pl == model.PlaceSplit && model.ConsumeMode(sc.Get(model.SetConsume)) == model.ConsumeHash && model.ResolveHashThreads(sc, mode, s.p.cpus) > 1 {
		loadCPUs = model.HashLoadCPUs(mode, sc.Name, s.p.cpus, serverCPUs) // room for the hash threads
	}
	var failed *model.PlacementFailed
	if pl != model.PlaceOS && !platform.PinSupported {
		loadCPUs, serverCPUs = nil, nil
		failed = &model.PlacementFailed{Placement: pl, Failures: []string{platform.ErrPinUnsupported.Error()}}
	} else {
		var errs []string
		pin := func(c *child, cpus []int) []int {
			if c == nil || c.proc.Process() == nil {
				return nil
			}
			if err := platform.PinProcess(c.pid(), cpus); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", c.role, err))
				return nil
			}
			if c.realPID > 0 && !c.attached {
				if err := platform.PinProcess(c.realPID, cpus); err != nil {
					errs = append(errs, fmt.Sprintf("real server: %v", err))
					return nil
				}
			}
			return cpus
		}
		loadCPUs, serverCPUs = pin(ld, loadCPUs), pin(srv, serverCPUs)
		if len(errs) > 0 {
			failed = &model.PlacementFailed{Placement: pl, Failures: errs}
		}
	}
	s.mu.Lock()
	s.loadCPUs, s.serverCPUs = loadCPUs, serverCPUs
	s.mu.Unlock()
	if failed != nil {
		s.p.raise(model.Warn(s.id, *failed))
	}
}

// placement is what a sample reports of where the side ran. The caller
// holds s.mu.
func (s *side) placement() model.Placement {
	sc := s.cfg
	pl := model.Placement{Setting: model.Place(sc.Get(model.SetPlacement)), LoadCPUs: model.CPUList(s.loadCPUs), ServerCPUs: "n/a"}
	if sc.Target == "" {
		pl.ServerCPUs = model.CPUList(s.serverCPUs)
	}
	return pl
}
