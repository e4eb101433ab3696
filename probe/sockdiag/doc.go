// Package sockdiag looks at the sockets of processes nbdscope did not
// write, from outside and without privileges beyond reading their /proc
// (and, for the Sampler's cheaper path, taking duplicates of their
// descriptors with pidfd_getfd: ptrace's permission, which a parent has
// over its children):
//
//   - which sockets a process, or a process and everything it started,
//     holds (/proc/PID/fd socket:[N] links), with the fd and PID of each;
//   - what each socket is, from NETLINK_SOCK_DIAG: unix_diag for AF_UNIX
//     (path, peer inode, queue lengths, the SK_MEMINFO array) and
//     inet_diag for TCP over IPv4 and IPv6 (addresses, queues, memory,
//     tcp_info);
//   - which of them are connected to which (Links), so a caller can say
//     "client PID x fd 5 ↔ server PID y fd 9";
//   - how full the senders' send buffers are over time (Sampler), the
//     figure that says whether a bigger send buffer can matter at all.
//
// The netlink replies are parsed by pure functions (ParseUnixDiag,
// ParseInetDiag: bytes in, structs out) that are fuzzed: a truncated,
// malformed or unexpected reply is an error, never a panic. Those
// functions and the window arithmetic build on every OS; reading /proc and
// talking netlink are Linux only, and elsewhere every entry point returns a
// *NotAvailableError that says why.
//
// The figures are the kernel's own, the ones `ss -xm` / `ss -tm` print:
// for a unix stream socket SK_MEMINFO_WMEM_ALLOC is the memory (skb
// truesize: payload plus per-skb overhead) of everything the socket sent
// that its peer has not read yet, charged against SK_MEMINFO_SNDBUF; it is
// also what SIOCOUTQ returns on a held unix socket. Fill.MeanBytes says what
// the sampler reports for TCP.
//
// A sender whose holder is known (Sampler.SetHeld: the process and the
// descriptor) is read without netlink once it has been found: pidfd_getfd
// takes a duplicate of the holder's descriptor, fstat checks it still
// names that socket, getsockopt(SO_MEMINFO) reads the same SK_MEMINFO
// array unix_diag and inet_diag report, and the duplicate is closed
// before the next socket is read. A duplicate kept open would keep the
// socket open after its process closed it, and its peer would wait for an
// end of file. A process whose descriptors cannot be duplicated (another
// user's, a Yama ptrace scope, a kernel before 5.6) is read by netlink.
//
// # Cost
//
// BenchmarkSampler samples 8 connections per side (16 senders) at
// DefaultRate (200 Hz when the figures below were taken, 100 Hz since)
// and reports the process's CPU time (getrusage) as a share of a core:
// the median of three 2 s stretches, each beside one of the floor (the
// same sampler with no sockets, which only wakes 200 times a second). On
// the 2-core development VM with nothing else running (2026-12-01), the
// held path (SetHeld, what the engine uses) costs 1.77% of a core for
// unix sockets (1.52-1.96% over the three), 1.55% with 1000 other unix
// sockets in the namespace, 1.68% for TCP; the floor is 0.9-1.1%, most of
// it the VM's timer wake-ups (a bare 200 Hz clock_nanosleep loop costs
// 0.93% here). Per tick that is one pidfd_getfd, fstat, getsockopt and
// close a socket, about 1.8 µs together. By netlink (Set), a dump costs
// about 20 µs plus 0.65 µs per socket of the namespace and an exact unix
// lookup scans the namespace's unix sockets: 1.67% for 16 unix sockets
// alone, 5.9% beside 1000 others; TCP lookups 2.4% (1.7% with RecvEvery
// 10). A TCP dump costs 140 µs whatever it holds (the kernel walks its
// whole established hash table), so TCP is always looked up. A tick
// allocates nothing.
package sockdiag
