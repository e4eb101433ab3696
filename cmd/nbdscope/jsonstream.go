package main

import (
	"encoding/json"
	"io"
	"time"

	"nbdscope/engine"
	"nbdscope/model"
)

// run --json-stream writes one JSON object per line as the run goes, as
// iperf3's --json-stream: {"type": "start"} with the configuration, then
// "sample", "event", "warning" and "crash" objects as they happen, each
// with the fields of its run --json counterpart, and "summary" at the
// end: the run --json report without its samples (they came as lines),
// "partial" true with the reason when a signal or a crash cut the run
// short. Each line is written with one write call, so a reader never sees
// half of one.

// jsonStreamVersion is the stream's shape (docs/cli.md's table): 2 since a
// warning is a kind and its params, as run --json's report version 2.
const jsonStreamVersion = 2

// jsonStream writes the lines of a run's stream.
type jsonStream struct {
	w   io.Writer
	err error // the first write that failed
}

// start writes the stream's first line.
func (s *jsonStream) start(cfg model.Config, p engine.Controller) {
	s.line("start", struct {
		Version  int          `json:"version"`
		Nbdscope string       `json:"nbdscope_version"`
		Time     time.Time    `json:"time"`
		Config   model.Config `json:"config"`
		Platform any          `json:"platform"`
	}{jsonStreamVersion, model.Version, time.Now().UTC().Truncate(time.Second), cfg, p.Facts()})
}

// update writes the line of a sample, event, warning or crash.
func (s *jsonStream) update(u model.Update) {
	switch {
	case u.Sample != nil:
		s.line("sample", u.Sample)
	case u.Event != nil:
		s.line("event", u.Event)
	case u.Warning != nil:
		s.line("warning", u.Warning)
	case u.Crash != nil:
		s.line("crash", struct {
			*model.Crash
			Text string `json:"text"`
		}{u.Crash, u.Crash.Text()})
	}
}

// summary writes the last line: the report without its samples.
func (s *jsonStream) summary(rep model.Report) error {
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	delete(fields, "samples")
	fields["samples_streamed"], _ = json.Marshal(len(rep.Samples))
	s.line("summary", fields)
	return s.err
}

// line writes v as one line with "type" first, in one write call.
func (s *jsonStream) line(typ string, v any) {
	if s.err != nil {
		return
	}
	body, err := json.Marshal(v)
	if err != nil {
		s.err = err
		return
	}
	out := append([]byte(`{"type":`), mustJSON(typ)...)
	if len(body) > 2 { // an object with fields: append them after "type"
		out = append(append(out, ','), body[1:]...)
	} else {
		out = append(out, '}')
	}
	if _, err := s.w.Write(append(out, '\n')); err != nil {
		s.err = err
	}
}

// mustJSON is a string as JSON (a string always marshals).
func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
