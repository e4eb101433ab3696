package sockctl

import "testing"

func TestNamesAndMessage(t *testing.T) {
	if SendBuf.String() != "SO_SNDBUF" || RecvBuf.String() != "SO_RCVBUF" {
		t.Error("option names")
	}
	seen := map[string]bool{}
	for r := ReasonUnsupported; r <= ReasonNotSocket; r++ {
		if s := r.String(); s == "" || seen[s] || s[0] == 'R' {
			t.Errorf("reason %d is named %q", int(r), s)
		} else {
			seen[s] = true
		}
	}
	e := &Error{PID: 5, FD: -1, Why: "why", Fix: "do"}
	if e.Error() != "cannot change the socket buffers of process 5: why (fix: do)" {
		t.Errorf("%q", e.Error())
	}
	e.FD = 3
	if e.Error() != "cannot change the buffer of fd 3 of process 5: why (fix: do)" {
		t.Errorf("%q", e.Error())
	}
}
