package syscount

// rawHere is x86-64's: the system call numbers of
// arch/x86/entry/syscalls/syscall_64.tbl and struct pt_regs's layout
// (arch/x86/include/asm/ptrace.h).
var rawHere = &rawABI{
	nr: [NumSyscalls]int32{
		Read: 0, Readv: 19, Recvfrom: 45, Recvmsg: 47, Recvmmsg: 299,
		Write: 1, Writev: 20, Sendto: 44, Sendmsg: 46, Sendmmsg: 307,
	},
	firstArg: 14 * 8, // di
	callNr:   15 * 8, // orig_ax
	// A 32-bit program's calls come with its own numbers and a 32-bit
	// code segment: __USER_CS (0x33) is the 64-bit one. (FRED kernels
	// keep more bits above cs in the same word: hence the mask.)
	native: rawCheck{offset: 17 * 8, mask: 0xffff, want: 0x33},
}
