package engine

import "nbdscope/nbd"

func probeSocket(n int) (int, int, error) { return nbd.ProbeSocketBuffer("unix", nbd.SendBuf, n) }
