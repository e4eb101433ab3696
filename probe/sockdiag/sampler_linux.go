package sockdiag

import "context"

// StartSampler starts sampling, with a sock_diag socket of its own, until
// ctx ends or Stop is called. It has no sockets to sample until Set gives
// it some.
func StartSampler(ctx context.Context, cfg SamplerConfig) (*Sampler, error) {
	c, err := Dial()
	if err != nil {
		return nil, err
	}
	s, err := newSampler(cfg, samplerProbe{Conn: c, held: newPidfdReader()})
	if err != nil {
		c.Close()
		return nil, err
	}
	s.start(ctx)
	return s, nil
}
