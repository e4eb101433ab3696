// Package sockdiag looks at the sockets of processes nbdscope did not
// write, from outside and without privileges beyond reading their /proc:
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
// also what SIOCOUTQ returns on a held unix socket. See Sample for what the
// sampler reports for TCP.
package sockdiag
