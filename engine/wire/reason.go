package wire

import (
	"errors"

	"nbdscope/model"
	"nbdscope/probe/sockctl"
	"nbdscope/probe/sockdiag"
	"nbdscope/probe/syscount"
)

// ReasonOf is why err's figure or change is not to be had, as a typed
// reason: the instruments' own reasons (probe/syscount, probe/sockctl,
// probe/sockdiag) by kind, with the facts they read and their fix; any
// other error as a failure with its text. nil for none.
func ReasonOf(err error) *model.Reason {
	if err == nil {
		return nil
	}
	var u *syscount.Unavailable
	if errors.As(err, &u) {
		return &model.Reason{Kind: callsKinds[u.Reason], What: "socket calls", Detail: u.Why, Fix: u.Fix}
	}
	var se *sockctl.Error
	if errors.As(err, &se) {
		return &model.Reason{Kind: bufferKinds[se.Reason], What: "socket buffers", Detail: se.Why, Fix: se.Fix}
	}
	var na *sockdiag.NotAvailableError
	if errors.As(err, &na) {
		return &model.Reason{Kind: model.ReasonNotOnThisOS, What: na.What, Detail: na.What + " " + na.Reason}
	}
	if errors.Is(err, sockdiag.ErrGone) {
		return &model.Reason{Kind: model.ReasonGone, Detail: err.Error()}
	}
	return model.Failed(err)
}

// callsKinds are syscount's reasons as the model's kinds.
var callsKinds = map[syscount.Reason]model.ReasonKind{
	0:                                   model.ReasonFailed,
	syscount.ReasonUnsupported:          model.ReasonNotOnThisOS,
	syscount.ReasonNoPerfEvents:         model.ReasonNoKernelSupport,
	syscount.ReasonTracefsNotMounted:    model.ReasonNoKernelSupport,
	syscount.ReasonTracefsUnreadable:    model.ReasonNoPermission,
	syscount.ReasonNoSyscallTracepoints: model.ReasonNoKernelSupport,
	syscount.ReasonParanoid:             model.ReasonNoPermission,
	syscount.ReasonOtherUser:            model.ReasonNoPermission,
	syscount.ReasonBlocked:              model.ReasonBlocked,
	syscount.ReasonGone:                 model.ReasonGone,
	syscount.ReasonOff:                  model.ReasonCountingOff,
}

// bufferKinds are sockctl's reasons as the model's kinds.
var bufferKinds = map[sockctl.Reason]model.ReasonKind{
	0:                         model.ReasonFailed,
	sockctl.ReasonUnsupported: model.ReasonNotOnThisOS,
	sockctl.ReasonOldKernel:   model.ReasonNoKernelSupport,
	sockctl.ReasonOtherUser:   model.ReasonNoPermission,
	sockctl.ReasonNotDumpable: model.ReasonNoPermission,
	sockctl.ReasonYama:        model.ReasonNoPermission,
	sockctl.ReasonDenied:      model.ReasonBlocked,
	sockctl.ReasonGone:        model.ReasonGone,
	sockctl.ReasonNoFD:        model.ReasonGone,
	sockctl.ReasonNotSocket:   model.ReasonFailed,
}
