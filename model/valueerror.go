package model

import (
	"errors"
	"fmt"
	"strings"
)

// A ValueError is a value refused for a setting: the setting, the value
// as given and why, apart, so that each edge names the setting the way
// its user gave it and says the value and the reason once: the command
// line by the flag typed (--sndbuf-b "zz": want …), --at and preset
// files by the setting's name (sndbuf "zz": want …). Parse and SetValue
// return one; the reason names neither the setting nor the value.
type ValueError struct {
	Setting string // the setting's name (SetSndBuf …)
	Value   string // the value as given
	Reason  error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s %q: %v", strings.ReplaceAll(e.Setting, "-", " "), e.Value, e.Reason)
}

func (e *ValueError) Unwrap() error { return e.Reason }

// refused is the ValueError of setting's value; format and args say why.
func refused(setting, value, format string, args ...any) *ValueError {
	return &ValueError{Setting: setting, Value: value, Reason: fmt.Errorf(format, args...)}
}

// asValueError is err as setting's refusal of value: err itself when it
// is already one for that setting (it names the value as given), else err
// as the reason.
func asValueError(err error, setting, value string) *ValueError {
	var ve *ValueError
	if errors.As(err, &ve) && ve.Setting == setting {
		return ve
	}
	return &ValueError{Setting: setting, Value: value, Reason: err}
}

// uriProblem is an NBD URI's parse error without the URI it names.
func uriProblem(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return fmt.Errorf("not an NBD URI: %w", inner)
	}
	return err
}
