/* seccomp_bpf.h: classic BPF for seccomp, without the Linux headers.
 *
 * sbx assembles its seccomp programs itself (no libseccomp). This header
 * holds what every part of that needs and what the macOS build must compile
 * without the <linux/...> headers: the instruction encoding, the seccomp_data layout and
 * the return actions; then, in the order a program is made:
 *
 *   1. the syscall tables for x86_64 and aarch64, as data (checked at compile
 *      time against the native __NR_* numbers, so a wrong number cannot ship);
 *   2. the filters, as tables of rules (syscall, argument test, action, and
 *      the attack each one closes);
 *   3. the assembler: rules -> struct bpf_insn[], with a source map, its
 *      jumps naming labels resolved in one pass at the end;
 *   4. the disassembler behind `sbx --print=bpf`.
 *
 * Because the tables are data, an x86_64 build assembles and tests the
 * aarch64 program too (tests/unit.c runs both in a cBPF interpreter).
 */
#ifndef SBX_SECCOMP_BPF_H
#define SBX_SECCOMP_BPF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One classic BPF instruction, as struct sock_filter in <linux/filter.h>. */
struct bpf_insn {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};

/* Instruction classes and fields (<linux/bpf_common.h>). */
enum {
	BPF_LD = 0x00, BPF_ALU = 0x04, BPF_JMP = 0x05, BPF_RET = 0x06,
	BPF_W = 0x00, BPF_ABS = 0x20, BPF_K = 0x00,
	BPF_AND = 0x50, BPF_JA = 0x00, BPF_JEQ = 0x10, BPF_JGT = 0x20, BPF_JGE = 0x30, BPF_JSET = 0x40,
};

#define SBX_BPF_STMT(code, k)		((struct bpf_insn){ (uint16_t)(code), 0, 0, (uint32_t)(k) })
#define SBX_BPF_JUMP(code, k, jt, jf)	((struct bpf_insn){ (uint16_t)(code), (jt), (jf), (uint32_t)(k) })

/* struct seccomp_data (<linux/seccomp.h>): what a filter can load. */
enum {
	SD_NR = 0,		/* int nr */
	SD_ARCH = 4,		/* __u32 arch */
	SD_IP = 8,		/* __u64 instruction_pointer */
	SD_ARGS = 16,		/* __u64 args[6] */
};
/* Both supported architectures are little-endian, so the low 32 bits of
 * args[i] are at SD_ARGS + 8*i and the high ones 4 bytes later. */
#define SD_ARG_LO(i)	(SD_ARGS + 8 * (i))
#define SD_ARG_HI(i)	(SD_ARGS + 8 * (i) + 4)

/* Return actions (<linux/seccomp.h>). */
#define SBX_RET_KILL_PROCESS	0x80000000U
#define SBX_RET_ERRNO(e)	(0x00050000U | ((e) & 0xffffU))
#define SBX_RET_USER_NOTIF	0x7fc00000U
#define SBX_RET_ALLOW		0x7fff0000U

/* Architectures (<linux/audit.h>). */
#define SBX_AUDIT_ARCH_X86_64	0xc000003eU
#define SBX_AUDIT_ARCH_AARCH64	0xc00000b7U


/* ---- 1. Syscall numbers, per architecture --------------------------
 * X(name, x86_64, aarch64). Every syscall a rule names is listed; the
 * numbers come from the kernel's syscall_64.tbl and asm-generic/unistd.h. */
#define SBX_SYSCALLS(X) \
	X(socket, 41, 198) \
	X(socketpair, 53, 199) \
	X(io_uring_setup, 425, 425) \
	X(io_uring_enter, 426, 426) \
	X(io_uring_register, 427, 427) \
	X(unshare, 272, 97) \
	X(clone, 56, 220) \
	X(clone3, 435, 435) \
	X(setns, 308, 268) \
	X(mount, 165, 40) \
	X(umount2, 166, 39) \
	X(pivot_root, 155, 41) \
	X(chroot, 161, 51) \
	X(open_tree, 428, 428) \
	X(move_mount, 429, 429) \
	X(fsopen, 430, 430) \
	X(fsconfig, 431, 431) \
	X(fsmount, 432, 432) \
	X(fspick, 433, 433) \
	X(mount_setattr, 442, 442) \
	X(open_tree_attr, 467, 467) \
	X(ioctl, 16, 29) \
	X(keyctl, 250, 219) \
	X(add_key, 248, 217) \
	X(request_key, 249, 218) \
	X(memfd_secret, 447, 447) \
	X(execve, 59, 221) \
	X(execveat, 322, 281) \
	X(ptrace, 101, 117) \
	X(process_vm_readv, 310, 270) \
	X(process_vm_writev, 311, 271) \
	X(open, 2, -1) \
	X(openat, 257, 56) \
	X(openat2, 437, 437) \
	X(creat, 85, -1) \
	X(truncate, 76, 45) \
	X(unlink, 87, -1) \
	X(unlinkat, 263, 35) \
	X(rename, 82, -1) \
	X(renameat, 264, 38) \
	X(renameat2, 316, 276) \
	X(mkdir, 83, -1) \
	X(mkdirat, 258, 34) \
	X(rmdir, 84, -1) \
	X(symlink, 88, -1) \
	X(symlinkat, 266, 36) \
	X(link, 86, -1) \
	X(linkat, 265, 37) \
	X(chmod, 90, -1) \
	X(fchmodat, 268, 53) \
	X(chown, 92, -1) \
	X(fchownat, 260, 54) \
	X(lchown, 94, -1) \
	X(mknod, 133, -1) \
	X(mknodat, 259, 33) \
	X(fchmodat2, 452, 452) \
	X(utimensat, 280, 88) \
	X(utime, 132, -1) \
	X(utimes, 235, -1) \
	X(futimesat, 261, -1) \
	X(fchmod, 91, 52) \
	X(fchown, 93, 55) \
	X(setxattr, 188, 5) \
	X(lsetxattr, 189, 6) \
	X(fsetxattr, 190, 7) \
	X(removexattr, 197, 14) \
	X(lremovexattr, 198, 15) \
	X(fremovexattr, 199, 16) \
	X(setxattrat, 463, 463) \
	X(removexattrat, 466, 466) \
	X(connect, 42, 203) \
	X(sendto, 44, 206) \
	X(sendmsg, 46, 211) \
	X(sendmmsg, 307, 269) \
	X(bind, 49, 200) \
	X(setsid, 112, 157) \
	X(prlimit64, 302, 261) \
	X(fork, 57, -1) \
	X(vfork, 58, -1) \

enum sc_id {
#define X(name, x86, a64) SC_##name,
	SBX_SYSCALLS(X)
#undef X
	SC_COUNT
};

static const char *const sc_names[SC_COUNT] = {
#define X(name, x86, a64) #name,
	SBX_SYSCALLS(X)
#undef X
};

struct bpf_arch {
	const char *name;	/* as --arch= spells it */
	uint32_t audit_arch;	/* seccomp_data.arch */
	bool x32_alias;		/* x86_64: numbers with bit 30 set are the x32 ABI */
	int nr[SC_COUNT];
};

static const struct bpf_arch bpf_arches[] = {
	{ "x86_64", SBX_AUDIT_ARCH_X86_64, true, {
#define X(name, x86, a64) x86,
	SBX_SYSCALLS(X)
#undef X
	} },
	{ "aarch64", SBX_AUDIT_ARCH_AARCH64, false, {
#define X(name, x86, a64) a64,
	SBX_SYSCALLS(X)
#undef X
	} },
};

/* The build's own architecture, or NULL where seccomp is not built for it. */
static const struct bpf_arch *
bpf_native_arch(void)
{
#if defined(__x86_64__)
	return &bpf_arches[0];
#elif defined(__aarch64__)
	return &bpf_arches[1];
#else
	return NULL;
#endif
}

static const struct bpf_arch *
bpf_arch_named(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(bpf_arches) / sizeof(bpf_arches[0]); i++)
		if (strcmp(bpf_arches[i].name, name) == 0)
			return &bpf_arches[i];
	return NULL;
}

/* A wrong number in the table must not compile. */
#if defined(__linux__)
#  include <sys/syscall.h>
#  if defined(__x86_64__)
#  ifdef __NR_socket
_Static_assert(__NR_socket == 41, "x86_64 number of socket");
#  endif
#  ifdef __NR_socketpair
_Static_assert(__NR_socketpair == 53, "x86_64 number of socketpair");
#  endif
#  ifdef __NR_io_uring_setup
_Static_assert(__NR_io_uring_setup == 425, "x86_64 number of io_uring_setup");
#  endif
#  ifdef __NR_io_uring_enter
_Static_assert(__NR_io_uring_enter == 426, "x86_64 number of io_uring_enter");
#  endif
#  ifdef __NR_io_uring_register
_Static_assert(__NR_io_uring_register == 427, "x86_64 number of io_uring_register");
#  endif
#  ifdef __NR_unshare
_Static_assert(__NR_unshare == 272, "x86_64 number of unshare");
#  endif
#  ifdef __NR_clone
_Static_assert(__NR_clone == 56, "x86_64 number of clone");
#  endif
#  ifdef __NR_clone3
_Static_assert(__NR_clone3 == 435, "x86_64 number of clone3");
#  endif
#  ifdef __NR_setns
_Static_assert(__NR_setns == 308, "x86_64 number of setns");
#  endif
#  ifdef __NR_mount
_Static_assert(__NR_mount == 165, "x86_64 number of mount");
#  endif
#  ifdef __NR_umount2
_Static_assert(__NR_umount2 == 166, "x86_64 number of umount2");
#  endif
#  ifdef __NR_pivot_root
_Static_assert(__NR_pivot_root == 155, "x86_64 number of pivot_root");
#  endif
#  ifdef __NR_chroot
_Static_assert(__NR_chroot == 161, "x86_64 number of chroot");
#  endif
#  ifdef __NR_open_tree
_Static_assert(__NR_open_tree == 428, "x86_64 number of open_tree");
#  endif
#  ifdef __NR_move_mount
_Static_assert(__NR_move_mount == 429, "x86_64 number of move_mount");
#  endif
#  ifdef __NR_fsopen
_Static_assert(__NR_fsopen == 430, "x86_64 number of fsopen");
#  endif
#  ifdef __NR_fsconfig
_Static_assert(__NR_fsconfig == 431, "x86_64 number of fsconfig");
#  endif
#  ifdef __NR_fsmount
_Static_assert(__NR_fsmount == 432, "x86_64 number of fsmount");
#  endif
#  ifdef __NR_fspick
_Static_assert(__NR_fspick == 433, "x86_64 number of fspick");
#  endif
#  ifdef __NR_mount_setattr
_Static_assert(__NR_mount_setattr == 442, "x86_64 number of mount_setattr");
#  endif
#  ifdef __NR_open_tree_attr
_Static_assert(__NR_open_tree_attr == 467, "x86_64 number of open_tree_attr");
#  endif
#  ifdef __NR_ioctl
_Static_assert(__NR_ioctl == 16, "x86_64 number of ioctl");
#  endif
#  ifdef __NR_keyctl
_Static_assert(__NR_keyctl == 250, "x86_64 number of keyctl");
#  endif
#  ifdef __NR_add_key
_Static_assert(__NR_add_key == 248, "x86_64 number of add_key");
#  endif
#  ifdef __NR_request_key
_Static_assert(__NR_request_key == 249, "x86_64 number of request_key");
#  endif
#  ifdef __NR_memfd_secret
_Static_assert(__NR_memfd_secret == 447, "x86_64 number of memfd_secret");
#  endif
#  ifdef __NR_execve
_Static_assert(__NR_execve == 59, "x86_64 number of execve");
#  endif
#  ifdef __NR_execveat
_Static_assert(__NR_execveat == 322, "x86_64 number of execveat");
#  endif
#  ifdef __NR_ptrace
_Static_assert(__NR_ptrace == 101, "x86_64 number of ptrace");
#  endif
#  ifdef __NR_process_vm_readv
_Static_assert(__NR_process_vm_readv == 310, "x86_64 number of process_vm_readv");
#  endif
#  ifdef __NR_process_vm_writev
_Static_assert(__NR_process_vm_writev == 311, "x86_64 number of process_vm_writev");
#  endif
#  ifdef __NR_open
_Static_assert(__NR_open == 2, "x86_64 number of open");
#  endif
#  ifdef __NR_openat
_Static_assert(__NR_openat == 257, "x86_64 number of openat");
#  endif
#  ifdef __NR_openat2
_Static_assert(__NR_openat2 == 437, "x86_64 number of openat2");
#  endif
#  ifdef __NR_creat
_Static_assert(__NR_creat == 85, "x86_64 number of creat");
#  endif
#  ifdef __NR_truncate
_Static_assert(__NR_truncate == 76, "x86_64 number of truncate");
#  endif
#  ifdef __NR_unlink
_Static_assert(__NR_unlink == 87, "x86_64 number of unlink");
#  endif
#  ifdef __NR_unlinkat
_Static_assert(__NR_unlinkat == 263, "x86_64 number of unlinkat");
#  endif
#  ifdef __NR_rename
_Static_assert(__NR_rename == 82, "x86_64 number of rename");
#  endif
#  ifdef __NR_renameat
_Static_assert(__NR_renameat == 264, "x86_64 number of renameat");
#  endif
#  ifdef __NR_renameat2
_Static_assert(__NR_renameat2 == 316, "x86_64 number of renameat2");
#  endif
#  ifdef __NR_mkdir
_Static_assert(__NR_mkdir == 83, "x86_64 number of mkdir");
#  endif
#  ifdef __NR_mkdirat
_Static_assert(__NR_mkdirat == 258, "x86_64 number of mkdirat");
#  endif
#  ifdef __NR_rmdir
_Static_assert(__NR_rmdir == 84, "x86_64 number of rmdir");
#  endif
#  ifdef __NR_symlink
_Static_assert(__NR_symlink == 88, "x86_64 number of symlink");
#  endif
#  ifdef __NR_symlinkat
_Static_assert(__NR_symlinkat == 266, "x86_64 number of symlinkat");
#  endif
#  ifdef __NR_link
_Static_assert(__NR_link == 86, "x86_64 number of link");
#  endif
#  ifdef __NR_linkat
_Static_assert(__NR_linkat == 265, "x86_64 number of linkat");
#  endif
#  ifdef __NR_chmod
_Static_assert(__NR_chmod == 90, "x86_64 number of chmod");
#  endif
#  ifdef __NR_fchmodat
_Static_assert(__NR_fchmodat == 268, "x86_64 number of fchmodat");
#  endif
#  ifdef __NR_chown
_Static_assert(__NR_chown == 92, "x86_64 number of chown");
#  endif
#  ifdef __NR_fchownat
_Static_assert(__NR_fchownat == 260, "x86_64 number of fchownat");
#  endif
#  ifdef __NR_lchown
_Static_assert(__NR_lchown == 94, "x86_64 number of lchown");
#  endif
#  ifdef __NR_mknod
_Static_assert(__NR_mknod == 133, "x86_64 number of mknod");
#  endif
#  ifdef __NR_mknodat
_Static_assert(__NR_mknodat == 259, "x86_64 number of mknodat");
#  endif
#  ifdef __NR_fchmodat2
_Static_assert(__NR_fchmodat2 == 452, "x86_64 number of fchmodat2");
#  endif
#  ifdef __NR_utimensat
_Static_assert(__NR_utimensat == 280, "x86_64 number of utimensat");
#  endif
#  ifdef __NR_utime
_Static_assert(__NR_utime == 132, "x86_64 number of utime");
#  endif
#  ifdef __NR_utimes
_Static_assert(__NR_utimes == 235, "x86_64 number of utimes");
#  endif
#  ifdef __NR_futimesat
_Static_assert(__NR_futimesat == 261, "x86_64 number of futimesat");
#  endif
#  ifdef __NR_fchmod
_Static_assert(__NR_fchmod == 91, "x86_64 number of fchmod");
#  endif
#  ifdef __NR_fchown
_Static_assert(__NR_fchown == 93, "x86_64 number of fchown");
#  endif
#  ifdef __NR_setxattr
_Static_assert(__NR_setxattr == 188, "x86_64 number of setxattr");
#  endif
#  ifdef __NR_lsetxattr
_Static_assert(__NR_lsetxattr == 189, "x86_64 number of lsetxattr");
#  endif
#  ifdef __NR_fsetxattr
_Static_assert(__NR_fsetxattr == 190, "x86_64 number of fsetxattr");
#  endif
#  ifdef __NR_removexattr
_Static_assert(__NR_removexattr == 197, "x86_64 number of removexattr");
#  endif
#  ifdef __NR_lremovexattr
_Static_assert(__NR_lremovexattr == 198, "x86_64 number of lremovexattr");
#  endif
#  ifdef __NR_fremovexattr
_Static_assert(__NR_fremovexattr == 199, "x86_64 number of fremovexattr");
#  endif
#  ifdef __NR_setxattrat
_Static_assert(__NR_setxattrat == 463, "x86_64 number of setxattrat");
#  endif
#  ifdef __NR_removexattrat
_Static_assert(__NR_removexattrat == 466, "x86_64 number of removexattrat");
#  endif
#  ifdef __NR_connect
_Static_assert(__NR_connect == 42, "x86_64 number of connect");
#  endif
#  ifdef __NR_sendto
_Static_assert(__NR_sendto == 44, "x86_64 number of sendto");
#  endif
#  ifdef __NR_sendmsg
_Static_assert(__NR_sendmsg == 46, "x86_64 number of sendmsg");
#  endif
#  ifdef __NR_sendmmsg
_Static_assert(__NR_sendmmsg == 307, "x86_64 number of sendmmsg");
#  endif
#  ifdef __NR_bind
_Static_assert(__NR_bind == 49, "x86_64 number of bind");
#  endif
#  ifdef __NR_setsid
_Static_assert(__NR_setsid == 112, "x86_64 number of setsid");
#  endif
#  ifdef __NR_prlimit64
_Static_assert(__NR_prlimit64 == 302, "x86_64 number of prlimit64");
#  endif
#  ifdef __NR_fork
_Static_assert(__NR_fork == 57, "x86_64 number of fork");
#  endif
#  ifdef __NR_vfork
_Static_assert(__NR_vfork == 58, "x86_64 number of vfork");
#  endif
#  elif defined(__aarch64__)
#  ifdef __NR_socket
_Static_assert(__NR_socket == 198, "aarch64 number of socket");
#  endif
#  ifdef __NR_socketpair
_Static_assert(__NR_socketpair == 199, "aarch64 number of socketpair");
#  endif
#  ifdef __NR_io_uring_setup
_Static_assert(__NR_io_uring_setup == 425, "aarch64 number of io_uring_setup");
#  endif
#  ifdef __NR_io_uring_enter
_Static_assert(__NR_io_uring_enter == 426, "aarch64 number of io_uring_enter");
#  endif
#  ifdef __NR_io_uring_register
_Static_assert(__NR_io_uring_register == 427, "aarch64 number of io_uring_register");
#  endif
#  ifdef __NR_unshare
_Static_assert(__NR_unshare == 97, "aarch64 number of unshare");
#  endif
#  ifdef __NR_clone
_Static_assert(__NR_clone == 220, "aarch64 number of clone");
#  endif
#  ifdef __NR_clone3
_Static_assert(__NR_clone3 == 435, "aarch64 number of clone3");
#  endif
#  ifdef __NR_setns
_Static_assert(__NR_setns == 268, "aarch64 number of setns");
#  endif
#  ifdef __NR_mount
_Static_assert(__NR_mount == 40, "aarch64 number of mount");
#  endif
#  ifdef __NR_umount2
_Static_assert(__NR_umount2 == 39, "aarch64 number of umount2");
#  endif
#  ifdef __NR_pivot_root
_Static_assert(__NR_pivot_root == 41, "aarch64 number of pivot_root");
#  endif
#  ifdef __NR_chroot
_Static_assert(__NR_chroot == 51, "aarch64 number of chroot");
#  endif
#  ifdef __NR_open_tree
_Static_assert(__NR_open_tree == 428, "aarch64 number of open_tree");
#  endif
#  ifdef __NR_move_mount
_Static_assert(__NR_move_mount == 429, "aarch64 number of move_mount");
#  endif
#  ifdef __NR_fsopen
_Static_assert(__NR_fsopen == 430, "aarch64 number of fsopen");
#  endif
#  ifdef __NR_fsconfig
_Static_assert(__NR_fsconfig == 431, "aarch64 number of fsconfig");
#  endif
#  ifdef __NR_fsmount
_Static_assert(__NR_fsmount == 432, "aarch64 number of fsmount");
#  endif
#  ifdef __NR_fspick
_Static_assert(__NR_fspick == 433, "aarch64 number of fspick");
#  endif
#  ifdef __NR_mount_setattr
_Static_assert(__NR_mount_setattr == 442, "aarch64 number of mount_setattr");
#  endif
#  ifdef __NR_open_tree_attr
_Static_assert(__NR_open_tree_attr == 467, "aarch64 number of open_tree_attr");
#  endif
#  ifdef __NR_ioctl
_Static_assert(__NR_ioctl == 29, "aarch64 number of ioctl");
#  endif
#  ifdef __NR_keyctl
_Static_assert(__NR_keyctl == 219, "aarch64 number of keyctl");
#  endif
#  ifdef __NR_add_key
_Static_assert(__NR_add_key == 217, "aarch64 number of add_key");
#  endif
#  ifdef __NR_request_key
_Static_assert(__NR_request_key == 218, "aarch64 number of request_key");
#  endif
#  ifdef __NR_memfd_secret
_Static_assert(__NR_memfd_secret == 447, "aarch64 number of memfd_secret");
#  endif
#  ifdef __NR_execve
_Static_assert(__NR_execve == 221, "aarch64 number of execve");
#  endif
#  ifdef __NR_execveat
_Static_assert(__NR_execveat == 281, "aarch64 number of execveat");
#  endif
#  ifdef __NR_ptrace
_Static_assert(__NR_ptrace == 117, "aarch64 number of ptrace");
#  endif
#  ifdef __NR_process_vm_readv
_Static_assert(__NR_process_vm_readv == 270, "aarch64 number of process_vm_readv");
#  endif
#  ifdef __NR_process_vm_writev
_Static_assert(__NR_process_vm_writev == 271, "aarch64 number of process_vm_writev");
#  endif
#  ifdef __NR_openat
_Static_assert(__NR_openat == 56, "aarch64 number of openat");
#  endif
#  ifdef __NR_openat2
_Static_assert(__NR_openat2 == 437, "aarch64 number of openat2");
#  endif
#  ifdef __NR_truncate
_Static_assert(__NR_truncate == 45, "aarch64 number of truncate");
#  endif
#  ifdef __NR_unlinkat
_Static_assert(__NR_unlinkat == 35, "aarch64 number of unlinkat");
#  endif
#  ifdef __NR_renameat
_Static_assert(__NR_renameat == 38, "aarch64 number of renameat");
#  endif
#  ifdef __NR_renameat2
_Static_assert(__NR_renameat2 == 276, "aarch64 number of renameat2");
#  endif
#  ifdef __NR_mkdirat
_Static_assert(__NR_mkdirat == 34, "aarch64 number of mkdirat");
#  endif
#  ifdef __NR_symlinkat
_Static_assert(__NR_symlinkat == 36, "aarch64 number of symlinkat");
#  endif
#  ifdef __NR_linkat
_Static_assert(__NR_linkat == 37, "aarch64 number of linkat");
#  endif
#  ifdef __NR_fchmodat
_Static_assert(__NR_fchmodat == 53, "aarch64 number of fchmodat");
#  endif
#  ifdef __NR_fchownat
_Static_assert(__NR_fchownat == 54, "aarch64 number of fchownat");
#  endif
#  ifdef __NR_mknodat
_Static_assert(__NR_mknodat == 33, "aarch64 number of mknodat");
#  endif
#  ifdef __NR_fchmodat2
_Static_assert(__NR_fchmodat2 == 452, "aarch64 number of fchmodat2");
#  endif
#  ifdef __NR_utimensat
_Static_assert(__NR_utimensat == 88, "aarch64 number of utimensat");
#  endif
#  ifdef __NR_setxattr
_Static_assert(__NR_setxattr == 5, "aarch64 number of setxattr");
#  endif
#  ifdef __NR_lsetxattr
_Static_assert(__NR_lsetxattr == 6, "aarch64 number of lsetxattr");
#  endif
#  ifdef __NR_fsetxattr
_Static_assert(__NR_fsetxattr == 7, "aarch64 number of fsetxattr");
#  endif
#  ifdef __NR_removexattr
_Static_assert(__NR_removexattr == 14, "aarch64 number of removexattr");
#  endif
#  ifdef __NR_lremovexattr
_Static_assert(__NR_lremovexattr == 15, "aarch64 number of lremovexattr");
#  endif
#  ifdef __NR_fremovexattr
_Static_assert(__NR_fremovexattr == 16, "aarch64 number of fremovexattr");
#  endif
#  ifdef __NR_setxattrat
_Static_assert(__NR_setxattrat == 463, "aarch64 number of setxattrat");
#  endif
#  ifdef __NR_removexattrat
_Static_assert(__NR_removexattrat == 466, "aarch64 number of removexattrat");
#  endif
#  ifdef __NR_connect
_Static_assert(__NR_connect == 203, "aarch64 number of connect");
#  endif
#  ifdef __NR_sendto
_Static_assert(__NR_sendto == 206, "aarch64 number of sendto");
#  endif
#  ifdef __NR_sendmsg
_Static_assert(__NR_sendmsg == 211, "aarch64 number of sendmsg");
#  endif
#  ifdef __NR_sendmmsg
_Static_assert(__NR_sendmmsg == 269, "aarch64 number of sendmmsg");
#  endif
#  ifdef __NR_bind
_Static_assert(__NR_bind == 200, "aarch64 number of bind");
#  endif
#  ifdef __NR_setsid
_Static_assert(__NR_setsid == 157, "aarch64 number of setsid");
#  endif
#  ifdef __NR_fchmod
_Static_assert(__NR_fchmod == 52, "aarch64 number of fchmod");
#  endif
#  ifdef __NR_fchown
_Static_assert(__NR_fchown == 55, "aarch64 number of fchown");
#  endif
#  ifdef __NR_prlimit64
_Static_assert(__NR_prlimit64 == 261, "aarch64 number of prlimit64");
#  endif
#  endif
#endif
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
    "SD_ARG_LO assumes the low word of a 64-bit argument comes first");

/* ---- 2. The filters, as rules ----------------------------------------
 * One row per decision; the assembler turns them into a program and the
 * disassembler prints the reason next to the instructions it produced. */

/* Constants the rules test, defined here so no Linux header is needed. */
#define SBX_AF_UNIX		1
#define SBX_AF_VSOCK		40
#define SBX_CLONE_VM		0x00000100U
#define SBX_CLONE_FS		0x00000200U
#define SBX_CLONE_FILES		0x00000400U
#define SBX_CLONE_VFORK		0x00004000U
#define SBX_CLONE_NEWNS		0x00020000U
#define SBX_CLONE_NEWUSER	0x10000000U
#define SBX_CLONE_PARENT_SETTID	0x00100000U	/* no meaning for unshare(); srt refuses it */
#define SBX_TIOCSTI		0x5412U
#define SBX_TIOCLINUX		0x541cU
#define SBX_EPERM		1
#define SBX_ENOSYS		38
#define SBX_O_WRITE_INTENT	0x643U	/* O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND (same on both arches) */
#define SBX_O_TMPFILE_BIT	0x400000U	/* __O_TMPFILE (asm-generic and x86_64 alike) */
#define SBX_O_OBSERVE		(SBX_O_WRITE_INTENT | SBX_O_TMPFILE_BIT)
/* ioctl(2) requests that make or remove a tree of names at once (_IOW,
 * the same numbers on both arches): btrfs's subvolume and snapshot, v1
 * and v2 (struct btrfs_ioctl_vol_args{,_v2}, 4096 bytes), bcachefs's
 * (struct bch_ioctl_subvolume, 32 bytes; a snapshot is a flag of create) */
#define SBX_BTRFS_IOC_SNAP_CREATE	0x50009401U
#define SBX_BTRFS_IOC_SUBVOL_CREATE	0x5000940eU
#define SBX_BTRFS_IOC_SNAP_DESTROY	0x5000940fU
#define SBX_BTRFS_IOC_SNAP_CREATE_V2	0x50009417U
#define SBX_BTRFS_IOC_SUBVOL_CREATE_V2	0x50009418U
#define SBX_BTRFS_IOC_SNAP_DESTROY_V2	0x5000943fU
#define SBX_BCH_IOCTL_SUBVOLUME_CREATE	0x4020bc10U
#define SBX_BCH_IOCTL_SUBVOLUME_DESTROY	0x4020bc11U
#define SBX_BTRFS_IOC_SUBVOL_SETFLAGS	0x4008941aU	/* _IOW(0x94, 26, __u64) */

enum bpf_cmp {
	CMP_NONE,	/* the syscall alone decides */
	CMP_EQ,		/* low 32 bits of the argument == value */
	CMP_ANY_BIT,	/* low 32 bits of the argument & value != 0 */
	CMP_NULL,	/* the whole 64-bit argument is 0: a NULL pointer (value unused). A
			 * pointer's low word alone would not do: a command that put a path
			 * or an address at 0x7e0100000000 passes a pointer whose low 32
			 * bits are 0, and the call would go unobserved */
	CMP_KEY,	/* low 32 bits of the argument == the program's key (bpf_opts.key,
			 * drawn per session; value unused); no key (0): the rule is left out */
};

enum rule_group {		/* which policy switch a rule belongs to */
	RG_ALWAYS,		/* the namespace, mount, terminal and keyring rules */
	RG_UNIX,		/* dropped by allow-all-unix-sockets */
	RG_USERNS,		/* dropped by allow-nested-userns */
	RG_PROXY,		/* only in the proxy's own filter: it parses hostile bytes */
	RG_OBSERVE,		/* only in the write observer's USER_NOTIF program (bpf_opts.observe) */
	RG_OBSERVE_SESSION,	/* ... and only in a session's (bpf_opts.session) */
	RG_NOFORK,		/* only in the observer's own lockdown (bpf_opts.observer_lockdown) */
	RG_NOREAD,		/* the proxy's, but not the observer's lockdown: reading the
				 * command's memory is what the observer is for */
};

struct bpf_rule {
	enum sc_id sc;
	int arg;		/* which argument CMP tests */
	enum bpf_cmp cmp;
	uint32_t value;
	uint32_t action;	/* SBX_RET_* */
	enum rule_group group;
	const char *why;	/* the attack it closes; printed by --print=bpf */
};

#define EPERM_	SBX_RET_ERRNO(SBX_EPERM)

static const struct bpf_rule bpf_rules[] = {
/*	  syscall		arg cmp		value				action			group */
	/* unix-block */
	{ SC_socket,		0, CMP_EQ,	SBX_AF_UNIX,			EPERM_,	RG_UNIX,
	  "local daemons (docker.sock, the session bus) are one connect() away" },
	{ SC_socket,		0, CMP_EQ,	SBX_AF_VSOCK,			EPERM_,	RG_UNIX,
	  "vsock reaches the hypervisor past the network namespace" },
	{ SC_io_uring_setup,	0, CMP_NONE,	0,				EPERM_,	RG_UNIX,
	  "IORING_OP_SOCKET creates sockets without socket()" },
	{ SC_io_uring_enter,	0, CMP_NONE,	0,				EPERM_,	RG_UNIX,
	  "a ring made elsewhere and passed in still takes IORING_OP_SOCKET" },
	{ SC_io_uring_register,	0, CMP_NONE,	0,				EPERM_,	RG_UNIX,
	  "no io_uring at all: its opcodes bypass every rule here" },
	/* socketpair(AF_UNIX, SOCK_STREAM or SOCK_SEQPACKET): both ends are
	 * connected to each other for good (connect() is EISCONN, a sendto
	 * address EISCONN or EOPNOTSUPP), so they reach nobody outside. A
	 * SOCK_DGRAM end is not: sendto() with a path, or connect() to one,
	 * reaches any datagram socket on the host (/dev/log, a daemon's),
	 * through read-only mounts too. Bit 1 of the type is SOCK_DGRAM (2)
	 * and SOCK_RAW (3, refused for AF_UNIX anyway), never STREAM (1) or
	 * SEQPACKET (5); the flags SOCK_NONBLOCK and SOCK_CLOEXEC lie above */
	{ SC_socketpair,	1, CMP_ANY_BIT,	2,				EPERM_,	RG_UNIX,
	  "a datagram end sends to any Unix socket path on the host (sendto, connect)" },

	/* namespaces and mounts: a private mount tree would undo the write denies */
	{ SC_unshare,		0, CMP_ANY_BIT,	SBX_CLONE_NEWUSER,		EPERM_,	RG_USERNS,
	  "a new user namespace grants every capability inside it" },
	{ SC_unshare,		0, CMP_ANY_BIT,	SBX_CLONE_NEWNS | SBX_CLONE_PARENT_SETTID, EPERM_, RG_ALWAYS,
	  "a new mount namespace could unmount the denies" },
	{ SC_clone,		0, CMP_ANY_BIT,	SBX_CLONE_NEWUSER,		EPERM_,	RG_USERNS,
	  "clone() can make a user namespace as unshare() can" },
	{ SC_clone,		0, CMP_ANY_BIT,	SBX_CLONE_NEWNS,		EPERM_,	RG_ALWAYS,
	  "clone() can make a mount namespace as unshare() can" },
	{ SC_clone3,		0, CMP_NONE,	0,	SBX_RET_ERRNO(SBX_ENOSYS),	RG_ALWAYS,
	  "its flags live in memory a filter cannot read; ENOSYS makes libc fall back to clone()" },
	{ SC_setns,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "joining another namespace leaves this sandbox" },
	{ SC_mount,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "a mount over a deny, or a remount read-write" },
	{ SC_umount2,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "unmounting a deny shows what it hid" },
	{ SC_pivot_root,	0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "a new root escapes the mount plan" },
	{ SC_chroot,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "a chroot with an open directory fd is the classic escape" },
	{ SC_open_tree,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "the new mount API: a detached copy of a tree, without its denies" },
	{ SC_open_tree_attr,	0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "open_tree() with attributes" },
	{ SC_move_mount,	0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "attaches a detached tree anywhere" },
	{ SC_fsopen,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "a new file system instance, e.g. a fresh writable tmpfs over a deny" },
	{ SC_fsconfig,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "configures what fsopen() made" },
	{ SC_fsmount,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "turns an fsopen() context into a mount" },
	{ SC_fspick,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "reconfigures an existing mount (read-only -> read-write)" },
	{ SC_mount_setattr,	0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "clears MOUNT_ATTR_RDONLY on a mount" },

	/* the terminal and the kernel's shared state */
	{ SC_ioctl,		1, CMP_EQ,	SBX_TIOCSTI,			EPERM_,	RG_ALWAYS,
	  "pushes keystrokes into the shell that reads this terminal after the command" },
	{ SC_ioctl,		1, CMP_EQ,	SBX_TIOCLINUX,			EPERM_,	RG_ALWAYS,
	  "TIOCL_PASTESEL pastes into a virtual console as TIOCSTI would" },
	/* a read-only tree: what the command planted in it (a hook, a config)
	 * the audit after the run cannot rename or rewrite (EROFS), and git
	 * runs it later all the same. A subvolume's read-only flag is its
	 * owner's to set; a snapshot's flags (v2, bcachefs's) are in memory a
	 * filter cannot read, so those are refused whole; btrfs's v1 snapshot
	 * (writable) and subvolumes stay, observed (RG_OBSERVE) */
	{ SC_ioctl,		1, CMP_EQ,	SBX_BTRFS_IOC_SUBVOL_SETFLAGS,	EPERM_,	RG_ALWAYS,
	  "a btrfs subvolume made read-only: the audit could not neutralise what it holds" },
	{ SC_ioctl,		1, CMP_EQ,	SBX_BTRFS_IOC_SNAP_CREATE_V2,	EPERM_,	RG_ALWAYS,
	  "a btrfs snapshot whose flags (in memory) may make it read-only" },
	{ SC_ioctl,		1, CMP_EQ,	SBX_BCH_IOCTL_SUBVOLUME_CREATE,	EPERM_,	RG_ALWAYS,
	  "a bcachefs snapshot whose flags (in memory) may make it read-only" },
	{ SC_keyctl,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "the session keyring is shared with the user's other processes" },
	{ SC_add_key,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "adds to the shared keyrings" },
	{ SC_request_key,	0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "can run /sbin/request-key outside the sandbox" },

	/* memory no other process can read: not /proc/PID/mem, not
	 * process_vm_readv, so the write observer could not read a path put
	 * there, and the refusal of that write would go unreported (an attack
	 * review). ENOSYS, as on a kernel built without it: its users fall
	 * back to ordinary memory. */
	{ SC_memfd_secret,	0, CMP_NONE,	0,	SBX_RET_ERRNO(SBX_ENOSYS),	RG_ALWAYS,
	  "secret memory hides a path from the write observer; ENOSYS as on a kernel without it" },

	/* other processes' resource limits: the kernel asks only that the
	 * uid be the same (not ptrace's access, not dumpable), and a pid is
	 * an int, so its low word is all of it */
	{ SC_prlimit64,		0, CMP_EQ,	0,				SBX_RET_ALLOW, RG_ALWAYS,
	  "a process's own limits: getrlimit and setrlimit ask with pid 0" },
	{ SC_prlimit64,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
	  "another process's limits: sbx-init's lowered (no descriptors, a CPU limit) would end a session" },

	/* The proxy's own filter adds these: a memory bug in the code that
	 * parses what the command sends must not become code execution, a
	 * written file or a read of another process with the user's rights. */
	{ SC_execve,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY,
	  "proxy: running a program is what an exploit wants first" },
	{ SC_execveat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: execve by fd" },
	{ SC_ptrace,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY,
	  "proxy: reaching into the user's other processes" },
	{ SC_process_vm_readv,	0, CMP_NONE,	0,				EPERM_,	RG_NOREAD, "proxy: reading another process" },
	{ SC_process_vm_writev,	0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: writing another process" },
	{ SC_open,		1, CMP_ANY_BIT,	SBX_O_WRITE_INTENT,		EPERM_,	RG_PROXY,
	  "proxy: opening a file to write (reads stay: the resolver reads /etc/hosts)" },
	{ SC_openat,		2, CMP_ANY_BIT,	SBX_O_WRITE_INTENT,		EPERM_,	RG_PROXY, "proxy: openat to write" },
	{ SC_openat2,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY,
	  "proxy: openat2's flags are in memory a filter cannot read" },
	{ SC_creat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: creat writes" },
	{ SC_truncate,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: truncating a file" },
	{ SC_unlink,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: deleting a file" },
	{ SC_unlinkat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: deleting a file" },
	{ SC_rename,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: renaming a file" },
	{ SC_renameat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: renaming a file" },
	{ SC_renameat2,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: renaming a file" },
	{ SC_mkdir,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: making a directory" },
	{ SC_mkdirat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: making a directory" },
	{ SC_rmdir,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: removing a directory" },
	{ SC_symlink,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: planting a symlink" },
	{ SC_symlinkat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: planting a symlink" },
	{ SC_link,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: planting a hard link" },
	{ SC_linkat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: planting a hard link" },
	{ SC_chmod,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: changing modes" },
	{ SC_fchmodat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: changing modes" },
	{ SC_chown,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: changing owners" },
	{ SC_fchownat,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: changing owners" },
	{ SC_lchown,		0, CMP_NONE,	0,				EPERM_,	RG_PROXY, "proxy: changing owners" },

	/* The observer's lockdown adds these to the proxy's: it reads the
	 * command's memory (hostile, racing) and has no use for a new process;
	 * an exploit that forks escapes the single-threaded loop's watch. It
	 * drops one of the proxy's: process_vm_readv (RG_NOREAD), the one
	 * system call that reads a caller's bytes, where /proc/PID/mem took an
	 * open, a pread and a close each time, with the same ptrace check;
	 * process_vm_writev stays refused. */
	{ SC_clone,		0, CMP_NONE,	0,				EPERM_,	RG_NOFORK,
	  "observer: no new process (it has no threads either)" },
	{ SC_fork,		0, CMP_NONE,	0,				EPERM_,	RG_NOFORK, "observer: no new process" },
	{ SC_vfork,		0, CMP_NONE,	0,				EPERM_,	RG_NOFORK, "observer: no new process" },

	/* The write observer: a separate program, installed with
	 * SECCOMP_FILTER_FLAG_NEW_LISTENER, whose only action is USER_NOTIF:
	 * the listener (sbx's observer process) reads the path and always
	 * answers CONTINUE, so it reports and never decides. Precedence makes
	 * that safe to stack: the kernel runs every filter and takes the
	 * strongest action, and ERRNO and KILL beat USER_NOTIF, so a call the
	 * filters above refuse never reaches the observer. Write intent only,
	 * judged here where an argument allows it, so reads never stop: srt's
	 * list (open and openat only when the low word of the flags has
	 * O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND), plus what srt misses:
	 * the __O_TMPFILE bit, the xattr writes and connect(). */
	{ SC_open,		1, CMP_ANY_BIT,	SBX_O_OBSERVE,			SBX_RET_USER_NOTIF, RG_OBSERVE,
	  "observer: open with write intent (or O_TMPFILE)" },
	{ SC_openat,		2, CMP_ANY_BIT,	SBX_O_OBSERVE,			SBX_RET_USER_NOTIF, RG_OBSERVE,
	  "observer: openat with write intent (or O_TMPFILE)" },
	{ SC_openat2,		0, CMP_NONE,	0,	SBX_RET_USER_NOTIF, RG_OBSERVE,
	  "observer: openat2's flags are in memory: every call (the observer reads them)" },
#define OBS_(sc, why)	{ sc, 0, CMP_NONE, 0, SBX_RET_USER_NOTIF, RG_OBSERVE, "observer: " why }
	OBS_(SC_creat, "creat"),
	OBS_(SC_truncate, "truncating by path"),
	OBS_(SC_unlink, "deleting"), OBS_(SC_unlinkat, "deleting"), OBS_(SC_rmdir, "removing a directory"),
	OBS_(SC_rename, "renaming"), OBS_(SC_renameat, "renaming"), OBS_(SC_renameat2, "renaming"),
	OBS_(SC_mkdir, "making a directory"), OBS_(SC_mkdirat, "making a directory"),
	OBS_(SC_mknod, "making a node"), OBS_(SC_mknodat, "making a node"),
	OBS_(SC_symlink, "planting a symlink"), OBS_(SC_symlinkat, "planting a symlink"),
	OBS_(SC_link, "planting a hard link"), OBS_(SC_linkat, "planting a hard link"),
	OBS_(SC_chmod, "changing modes"), OBS_(SC_fchmodat, "changing modes"), OBS_(SC_fchmodat2, "changing modes"),
	OBS_(SC_chown, "changing owners"), OBS_(SC_fchownat, "changing owners"), OBS_(SC_lchown, "changing owners"),
	/* by descriptor: one opened only to read (not observed) changes modes
	 * and owners too, and is refused on a read-only mount all the same */
	OBS_(SC_fchmod, "changing modes by descriptor"), OBS_(SC_fchown, "changing owners by descriptor"),
	OBS_(SC_utime, "changing times"), OBS_(SC_utimes, "changing times"), OBS_(SC_futimesat, "changing times"),
	/* futimens(fd) is utimensat(fd, NULL): no path, and a write open of
	 * fd was observed; tar calls it once a file, so skipping it halves the
	 * notifications of an unpack (one on a descriptor opened only to read,
	 * refused on a read-only mount, goes unreported: a hint lost). The
	 * whole pointer decides (CMP_NULL): a path at an address whose low
	 * word is 0 is observed like any other */
	{ SC_utimensat,		1, CMP_NULL,	0,				SBX_RET_ALLOW, RG_OBSERVE,
	  "observer: futimens(fd), utimensat with no path: the open was observed" },
	OBS_(SC_utimensat, "changing times"),
	OBS_(SC_setxattr, "writing an xattr"), OBS_(SC_lsetxattr, "writing an xattr"),
	OBS_(SC_fsetxattr, "writing an xattr"), OBS_(SC_setxattrat, "writing an xattr"),
	OBS_(SC_removexattr, "removing an xattr"), OBS_(SC_lremovexattr, "removing an xattr"),
	OBS_(SC_fremovexattr, "removing an xattr"), OBS_(SC_removexattrat, "removing an xattr"),
	OBS_(SC_connect, "every connect: sbx judges the address (a direct connection past the proxy)"),
	/* an address reached without connect: a UDP datagram (a DNS query to
	 * a server outside), TCP fast open (MSG_FASTOPEN). send() is
	 * sendto(fd, buf, len, flags, NULL, 0), on a connected socket: not
	 * observed. sendmsg's and sendmmsg's addresses are in memory: every
	 * call (the observer reads them) */
	{ SC_sendto,		4, CMP_NULL,	0,				SBX_RET_ALLOW, RG_OBSERVE,
	  "observer: send(), sendto with no address: a connected socket's" },
	OBS_(SC_sendto, "sendto with an address: sbx judges it (a datagram past the proxy, TCP fast open)"),
	OBS_(SC_sendmsg, "sendmsg: its address is in memory, so every call"),
	OBS_(SC_sendmmsg, "sendmmsg: its addresses are in memory, so every call"),
	OBS_(SC_bind, "bind: a Unix socket's path is a name written"),
	/* A subvolume or a snapshot is a directory made (a snapshot: a whole
	 * tree, a copy of another, its files' times kept) by an ioctl on an
	 * fd opened only to read, in any directory the user can write. No call
	 * above names it, so the audit could not tell a repository copied into
	 * place from one that was there, nor sbx walk the roots before it
	 * (scan_deep): observed, with no path read, so the audit is unsure
	 * (9b, OU_SUBVOLUME). The request is an int: its low word is all of it */
#define OBS_IOC_(req, why) \
	{ SC_ioctl, 1, CMP_EQ, req, SBX_RET_USER_NOTIF, RG_OBSERVE, "observer: " why }
	OBS_IOC_(SBX_BTRFS_IOC_SNAP_CREATE, "a btrfs snapshot: a tree of names, no path named"),
	OBS_IOC_(SBX_BTRFS_IOC_SNAP_CREATE_V2, "a btrfs snapshot (v2)"),
	OBS_IOC_(SBX_BTRFS_IOC_SUBVOL_CREATE, "a btrfs subvolume: a directory made"),
	OBS_IOC_(SBX_BTRFS_IOC_SUBVOL_CREATE_V2, "a btrfs subvolume (v2)"),
	OBS_IOC_(SBX_BTRFS_IOC_SNAP_DESTROY, "a btrfs subvolume removed: a tree of names gone"),
	OBS_IOC_(SBX_BTRFS_IOC_SNAP_DESTROY_V2, "a btrfs subvolume removed (v2)"),
	OBS_IOC_(SBX_BCH_IOCTL_SUBVOLUME_CREATE, "a bcachefs subvolume or snapshot made"),
	OBS_IOC_(SBX_BCH_IOCTL_SUBVOLUME_DESTROY, "a bcachefs subvolume removed"),
#undef OBS_IOC_
	/* A session's execs are each a session of their own (setsid in the
	 * exec's child, 10a), and a refusal is its exec's by the caller's
	 * session id: a process can never join another session, only make a
	 * new one, and that is seen here, so the new session stays the exec's
	 * (10f, session_attribute). An exec's own setsid, from sbx-init, is
	 * not stopped (a hop to the observer and back on every exec): it
	 * passes the session's key, a random word in an argument setsid
	 * ignores, which no process inside can read (it is in sbx-init's
	 * memory, not dumpable, and in this program). One that guessed it
	 * would make a session nobody sees made, whose refusals go to every
	 * running exec (its own included): nothing is hidden */
	{ SC_setsid,		0, CMP_KEY,	0,				SBX_RET_ALLOW, RG_OBSERVE_SESSION,
	  "observer (a session): an exec's own, from sbx-init (the session's key)" },
	{ SC_setsid,		0, CMP_NONE,	0,	SBX_RET_USER_NOTIF,	RG_OBSERVE_SESSION,
	  "observer (a session): a new session, its creator's exec's" },
	/* The audit's attribution (sbx.c 9b): the observer reads a call's
	 * path while the call waits, and the kernel reads it again after; what
	 * lets another process change those bytes, the descriptors or the cwd
	 * in between makes sbx unsure who wrote what. A process sharing its
	 * parent's memory, files or cwd is trapped as it is made; a thread
	 * too (a vfork child that makes one leaves its parent sharing memory
	 * with it). Not vfork (CLONE_VFORK): its parent waits until the child
	 * execs, and sbx-init starts a run's command so before sbx holds the
	 * listener, which would hold it for good; the observer looks at such a
	 * child's own calls instead (obs_racy). fork() shares nothing. */
	/* SECURITY: before vfork's: a cwd or descriptors shared with a vfork
	 * child stay shared once it execs (an exec drops only the memory), and
	 * its parent goes on then: either's chdir (no program holds it) moves
	 * the other's relative path while its call waits (tested:
	 * scan_deep_attack_shared_cwd_killed). posix_spawn and vfork() share
	 * the memory alone */
	{ SC_clone,		0, CMP_ANY_BIT,	SBX_CLONE_FS | SBX_CLONE_FILES,	SBX_RET_USER_NOTIF, RG_OBSERVE,
	  "observer: a process sharing the cwd or descriptors, vfork's too (attribution)" },
	{ SC_clone,		0, CMP_ANY_BIT,	SBX_CLONE_VFORK,		SBX_RET_ALLOW, RG_OBSERVE,
	  "observer: vfork, or posix_spawn: the parent waits (its child's calls are looked at)" },
	{ SC_clone,		0, CMP_ANY_BIT,	SBX_CLONE_VM | SBX_CLONE_FS | SBX_CLONE_FILES, SBX_RET_USER_NOTIF, RG_OBSERVE,
	  "observer: a thread, or a process sharing memory, files or the cwd (attribution)" },
	OBS_(SC_ptrace, "another process's memory and registers written (attribution)"),
	OBS_(SC_process_vm_writev, "another process's memory written (attribution)"),
#undef OBS_
};

#undef EPERM_

/* ---- 3. The assembler ----------------------------------------------
 *
 * The program, for the rules a policy keeps (labels in brackets):
 *
 *   ld  arch ; jeq ARCH ? arch_ok : next    another ABI (i386 int 0x80, where
 *   ret KILL                                socketcall() multiplexes socket();
 *   [arch_ok] ld nr                         32-bit ARM compat) is refused
 *   x86_64 only:                            nr > 0x3fffffff and != -1 is the
 *     jgt 0x3fffffff ? next : nr_ok         x32 ABI: refused
 *     jeq 0xffffffff ? nr_ok : next
 *     ret KILL
 *   [nr_ok]
 *   for each syscall with rules:
 *     jeq NR ? next : next_syscall
 *     for each rule: [ld args[i].lo; jeq/jset VALUE ? next : next_rule]
 *                    [CMP_NULL: ld args[i].hi; jeq 0 ? next : next_rule]
 *                    ret ACTION
 *                    [next_rule]
 *     ret ALLOW                             if it tested an argument: none matched
 *     [next_syscall]
 *   ret ALLOW
 *
 * Jumps name labels, not distances, as in the kernel's
 * samples/seccomp/bpf-helper.c (whose labels serve only the unconditional
 * ja; here jt and jf each take one): bpf_jump_to() records which label
 * each of jt and jf goes to, bpf_label() marks where a label is once the
 * emitting code gets there, and bpf_resolve() walks the finished program
 * once and turns every label into the distance cBPF wants. This assembler
 * used to compute each distance from block lengths counted before the
 * block was emitted, so the counting and the emitting had to agree on the
 * shape of every rule; a change to one and not the other made a jump land
 * an instruction off, silently, in a program the kernel still loads. A
 * distance measured on the emitted instructions cannot disagree with them.
 *
 * Every jump is forward (cBPF has none backward, which is why a seccomp
 * program terminates), lands inside the program and fits jt/jf's 8 bits;
 * a label behind its jump, never placed, placed twice, past the end or
 * over 255 instructions away is a BUG that stops sbx, never a wrong
 * program.
 *
 * Arguments are compared on their low 32 bits only: seccomp_data.args[] are
 * 64-bit, but socket()'s domain and ioctl()'s request are ints, and the
 * kernel ignores the upper half. A 64-bit equality test would miss
 * socket(AF_UNIX | 1UL << 32, ...) and wave it through. The cBPF accumulator
 * is 32 bits wide, so loading the low word IS the mask. A pointer is the
 * exception (CMP_NULL): all 64 bits are the address, so NULL is both words. */

#define SBX_BPF_MAX_INSNS	512
#define SBX_BPF_MAX_LABELS	256	/* one per syscall block and per argument test, and two more */

struct bpf_prog {
	struct bpf_insn insn[SBX_BPF_MAX_INSNS];
	int16_t rule_of[SBX_BPF_MAX_INSNS];	/* source map: index into bpf_rules, or -1 */
	unsigned n;
	const struct bpf_arch *arch;
};

/* Which groups a program keeps: the sandbox's, by policy; the proxy's
 * (proxy = true) keeps every group but the observer's two; the observer's
 * lockdown (observer_lockdown, with proxy) is the proxy's with no new
 * process and process_vm_readv; observe: the write observer's USER_NOTIF
 * program alone, with session: a session's (setsid observed too). */
struct bpf_opts {
	bool allow_unix; bool allow_userns; bool proxy; bool observe; bool observer_lockdown; bool session;
	uint32_t key;		/* CMP_KEY's value (a session's observer program); 0: none */
};

/* The label every jump field names unless told otherwise: the next
 * instruction, a distance of 0. */
enum { LBL_NEXT = 0 };

/* A program being assembled: the program itself and, for each jump field,
 * the label it goes to until bpf_resolve() turns that into a distance.
 * It lives only while bpf_assemble() runs; struct bpf_prog is the result. */
struct bpf_asm {
	struct bpf_prog *p;
	uint16_t jt[SBX_BPF_MAX_INSNS], jf[SBX_BPF_MAX_INSNS];	/* label ids; LBL_NEXT: fall through */
	int16_t at[SBX_BPF_MAX_LABELS];	/* where each label was placed; -1: not yet */
	unsigned nlabels;		/* ids handed out, LBL_NEXT included */
	char err[160];			/* the first misuse found, reported by bpf_resolve() */
};

static bool
bpf_rule_kept(const struct bpf_rule *r, const struct bpf_opts *o)
{
	if (r->cmp == CMP_KEY && !o->key)
		return false;
	if (o->observe || r->group == RG_OBSERVE || r->group == RG_OBSERVE_SESSION)
		return o->observe && (r->group == RG_OBSERVE || (r->group == RG_OBSERVE_SESSION && o->session));
	if (r->group == RG_NOFORK)
		return o->observer_lockdown;
	if (r->group == RG_NOREAD)
		return o->proxy && !o->observer_lockdown;
	if (o->proxy)
		return true;
	return r->group == RG_ALWAYS || (r->group == RG_UNIX && !o->allow_unix) ||
	    (r->group == RG_USERNS && !o->allow_userns);
}

static void
bpf_emit(struct bpf_prog *p, struct bpf_insn i, int rule)
{
	if (p->n >= SBX_BPF_MAX_INSNS) {
		fprintf(stderr, "sbx: BUG: seccomp program longer than %d instructions\n", SBX_BPF_MAX_INSNS);
		abort();
	}
	p->rule_of[p->n] = (int16_t)rule;
	p->insn[p->n++] = i;
}

/* Start an empty program for arch in p, with no labels yet. */
static void
bpf_asm_start(struct bpf_asm *a, struct bpf_prog *p, const struct bpf_arch *arch)
{
	memset(a, 0, sizeof(*a));
	a->p = p;
	a->nlabels = 1;		/* id 0 is LBL_NEXT, placed everywhere */
	p->n = 0;
	p->arch = arch;
}

/* Remember the first misuse of the labels; bpf_resolve() reports it, so
 * the tests can provoke one without aborting. */
static void __attribute__((format(printf, 2, 3)))
bpf_asm_bug(struct bpf_asm *a, const char *fmt, ...)
{
	va_list ap;

	if (a->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
}

/* A new label, not placed yet: jumps may name it before bpf_label()
 * says where it is. */
static unsigned
bpf_label_new(struct bpf_asm *a)
{
	if (a->nlabels >= SBX_BPF_MAX_LABELS) {
		fprintf(stderr, "sbx: BUG: seccomp program with more than %d labels\n", SBX_BPF_MAX_LABELS);
		abort();
	}
	a->at[a->nlabels] = -1;
	return a->nlabels++;
}

/* Place label l at the next instruction to be emitted. */
static void
bpf_label(struct bpf_asm *a, unsigned l)
{
	if (l == LBL_NEXT || l >= a->nlabels)
		bpf_asm_bug(a, "label %u placed at %u was never made by bpf_label_new", l, a->p->n);
	else if (a->at[l] >= 0)
		bpf_asm_bug(a, "label %u placed twice, at %d and at %u", l, a->at[l], a->p->n);
	else
		a->at[l] = (int16_t)a->p->n;
}

static void
bpf_stmt(struct bpf_asm *a, uint16_t code, uint32_t k, int rule)
{
	bpf_emit(a->p, SBX_BPF_STMT(code, k), rule);
}

/* Emit a conditional jump to label jt if the test holds, to label jf if
 * not (LBL_NEXT for the next instruction). */
static void
bpf_jump_to(struct bpf_asm *a, uint16_t code, uint32_t k, unsigned jt, unsigned jf, int rule)
{
	unsigned i = a->p->n;

	bpf_emit(a->p, SBX_BPF_JUMP(code, k, 0, 0), rule);
	if (jt >= a->nlabels || jf >= a->nlabels)
		bpf_asm_bug(a, "jump at %u names label %u, never made by bpf_label_new", i, jt >= a->nlabels ? jt : jf);
	a->jt[i] = (uint16_t)jt;
	a->jf[i] = (uint16_t)jf;
}

/* Turn the label of every jump field into its distance, in one walk over
 * the finished program. Returns NULL, or what is wrong: a label misused
 * while emitting, never placed, behind its jump or on it, at or past the
 * end, or more than 255 instructions away; and any instruction but ret
 * at the end, where the next one would be outside. */
static const char *
bpf_resolve(struct bpf_asm *a)
{
	struct bpf_prog *p = a->p;
	unsigned i, f;

	if (a->err[0])
		return a->err;
	for (i = 0; i < p->n; i++) {
		if ((p->insn[i].code & 0x07) == BPF_RET)
			continue;
		if (i + 1 >= p->n) {
			snprintf(a->err, sizeof(a->err), "instruction %u runs past the end of the program", i);
			return a->err;
		}
		if ((p->insn[i].code & 0x07) != BPF_JMP)
			continue;
		for (f = 0; f < 2; f++) {
			unsigned l = f ? a->jf[i] : a->jt[i];
			long to = l == LBL_NEXT ? (long)i + 1 : a->at[l], d = to - (long)i - 1;

			if (to < 0)
				snprintf(a->err, sizeof(a->err), "jump at %u names label %u, never placed", i, l);
			else if (d < 0)
				snprintf(a->err, sizeof(a->err), "jump at %u to label %u at %ld goes backwards", i, l, to);
			else if (to >= (long)p->n)
				snprintf(a->err, sizeof(a->err), "jump at %u to label %u at %ld is past the end (%u)",
				    i, l, to, p->n);
			else if (d > 255)
				snprintf(a->err, sizeof(a->err),
				    "jump at %u to label %u at %ld: a distance of %ld does not fit in 8 bits", i, l, to, d);
			if (a->err[0])
				return a->err;
			if (f)
				p->insn[i].jf = (uint8_t)d;
			else
				p->insn[i].jt = (uint8_t)d;
		}
	}
	return NULL;
}

/* Assemble the program for one architecture. */
static void
bpf_assemble(const struct bpf_arch *arch, const struct bpf_opts *o, struct bpf_prog *p)
{
	struct bpf_asm a;
	bool done[SC_COUNT] = { false };
	unsigned arch_ok, nr_ok;
	const char *bug;
	size_t i, j;

	bpf_asm_start(&a, p, arch);
	arch_ok = bpf_label_new(&a);
	bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_ARCH, -1);
	bpf_jump_to(&a, BPF_JMP | BPF_JEQ | BPF_K, arch->audit_arch, arch_ok, LBL_NEXT, -1);
	bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_KILL_PROCESS, -1);
	bpf_label(&a, arch_ok);
	bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_NR, -1);
	if (arch->x32_alias) {
		/* nr > 0x3fffffff: x32 unless it is -1 (a tracer's "skip") */
		nr_ok = bpf_label_new(&a);
		bpf_jump_to(&a, BPF_JMP | BPF_JGT | BPF_K, 0x3fffffff, LBL_NEXT, nr_ok, -1);
		bpf_jump_to(&a, BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, nr_ok, LBL_NEXT, -1);
		bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_KILL_PROCESS, -1);
		bpf_label(&a, nr_ok);
	}
	/* one block per syscall, at its first row; the block and its jump
	 * appear with the first rule the policy keeps, so a syscall whose
	 * rules are all dropped costs nothing */
	for (i = 0; i < sizeof(bpf_rules) / sizeof(bpf_rules[0]); i++) {
		enum sc_id sc = bpf_rules[i].sc;
		unsigned next_syscall = LBL_NEXT;
		bool tested = false;

		if (done[sc] || arch->nr[sc] < 0)
			continue;
		done[sc] = true;
		for (j = i; j < sizeof(bpf_rules) / sizeof(bpf_rules[0]); j++) {
			const struct bpf_rule *r = &bpf_rules[j];

			if (r->sc != sc || !bpf_rule_kept(r, o))
				continue;
			if (next_syscall == LBL_NEXT) {
				next_syscall = bpf_label_new(&a);
				bpf_jump_to(&a, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)arch->nr[sc], LBL_NEXT,
				    next_syscall, (int)i);
			}
			if (r->cmp != CMP_NONE) {
				unsigned next_rule = bpf_label_new(&a);

				bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_ARG_LO(r->arg), (int)j);
				bpf_jump_to(&a, BPF_JMP | (r->cmp == CMP_ANY_BIT ? BPF_JSET : BPF_JEQ) | BPF_K,
				    r->cmp == CMP_NULL ? 0 : r->cmp == CMP_KEY ? o->key : r->value, LBL_NEXT, next_rule, (int)j);
				if (r->cmp == CMP_NULL) {	/* and the high word */
					bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_ARG_HI(r->arg), (int)j);
					bpf_jump_to(&a, BPF_JMP | BPF_JEQ | BPF_K, 0, LBL_NEXT, next_rule, (int)j);
				}
				bpf_stmt(&a, BPF_RET | BPF_K, r->action, (int)j);
				bpf_label(&a, next_rule);
				tested = true;
			} else {
				bpf_stmt(&a, BPF_RET | BPF_K, r->action, (int)j);
				tested = false;	/* the syscall's last word: nothing falls through */
			}
		}
		if (next_syscall == LBL_NEXT)
			continue;
		if (tested)	/* no argument test of this syscall matched */
			bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_ALLOW, -1);
		bpf_label(&a, next_syscall);
	}
	bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_ALLOW, -1);
	if ((bug = bpf_resolve(&a)) != NULL) {
		fprintf(stderr, "sbx: BUG: seccomp program for %s: %s\n", arch->name, bug);
		abort();
	}
}

/* ---- 4. The disassembler: one instruction a line -------------------- */

static const char *
bpf_errno_name(unsigned e)
{
	return e == SBX_EPERM ? "EPERM" : e == SBX_ENOSYS ? "ENOSYS" : "?";
}

static const char *
bpf_syscall_name(const struct bpf_arch *arch, uint32_t nr)
{
	int i;

	for (i = 0; i < SC_COUNT; i++)
		if (arch->nr[i] == (int)nr)
			return sc_names[i];
	return NULL;
}

/* Name a constant compared after `ld args[i]` of the rule that emitted it. */
static const char *
bpf_value_name(const struct bpf_rule *r, char *buf, size_t n)
{
	if (r->sc == SC_socket)
		return r->value == SBX_AF_UNIX ? "AF_UNIX" : r->value == SBX_AF_VSOCK ? "AF_VSOCK" : "?";
	if (r->sc == SC_socketpair)
		return r->value == 2 ? "SOCK_DGRAM" : "?";
	if (r->sc == SC_ioctl)
		return r->value == SBX_TIOCSTI ? "TIOCSTI" : r->value == SBX_TIOCLINUX ? "TIOCLINUX" : "?";
	if (r->cmp == CMP_NULL)
		return "NULL";
	if (r->cmp == CMP_KEY)
		return "the session's key";
	if (r->sc == SC_prlimit64)
		return r->value == 0 ? "0 (itself)" : "?";
	if (r->sc == SC_open || r->sc == SC_openat)
		return r->value == SBX_O_WRITE_INTENT ? "O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND"
		    : r->value == SBX_O_OBSERVE ? "O_WRITE_INTENT|__O_TMPFILE" : "?";
	if (r->value == (SBX_CLONE_VM | SBX_CLONE_FS | SBX_CLONE_FILES))
		return "CLONE_VM|CLONE_FS|CLONE_FILES";
	if (r->value == (SBX_CLONE_FS | SBX_CLONE_FILES))
		return "CLONE_FS|CLONE_FILES";
	if (r->value == SBX_CLONE_VFORK)
		return "CLONE_VFORK";
	snprintf(buf, n, "%s%s%s", r->value & SBX_CLONE_NEWUSER ? "CLONE_NEWUSER" : "",
	    (r->value & SBX_CLONE_NEWUSER) && (r->value & SBX_CLONE_NEWNS) ? "|" : "",
	    r->value & SBX_CLONE_NEWNS ? "CLONE_NEWNS" : "");
	if (r->value & SBX_CLONE_PARENT_SETTID)
		snprintf(buf + strlen(buf), n - strlen(buf), "|0x100000");
	return buf;
}

static void
bpf_ret_name(uint32_t k, char *buf, size_t n)
{
	if (k == SBX_RET_ALLOW)
		snprintf(buf, n, "ALLOW");
	else if (k == SBX_RET_USER_NOTIF)
		snprintf(buf, n, "USER_NOTIF");
	else if (k == SBX_RET_KILL_PROCESS)
		snprintf(buf, n, "KILL_PROCESS");
	else if ((k & 0xffff0000U) == SBX_RET_ERRNO(0))
		snprintf(buf, n, "ERRNO(%u) %s", k & 0xffff, bpf_errno_name(k & 0xffff));
	else
		snprintf(buf, n, "0x%08x", k);
}

/* Print the program as a listing: index, raw fields, mnemonic with named
 * constants and absolute targets, and the reason of the rule behind it. */
static void
bpf_disassemble(const struct bpf_prog *p, FILE *f)
{
	unsigned i;
	const char *loaded = "";

	fprintf(f, "# seccomp program for %s: %u instructions\n", p->arch->name, p->n);
	for (i = 0; i < p->n; i++) {
		const struct bpf_insn *in = &p->insn[i];
		const struct bpf_rule *r = p->rule_of[i] >= 0 ? &bpf_rules[p->rule_of[i]] : NULL;
		char text[96], name[64];
		unsigned code = in->code;

		if (code == (BPF_LD | BPF_W | BPF_ABS)) {
			loaded = in->k == SD_ARCH ? "arch" : in->k == SD_NR ? "nr" : "arg";
			if (in->k >= SD_ARGS)
				snprintf(text, sizeof(text), "ld  args[%u].%s", (in->k - SD_ARGS) / 8,
				    (in->k - SD_ARGS) % 8 ? "hi" : "lo");
			else
				snprintf(text, sizeof(text), "ld  %s", loaded);
		} else if ((code & 0x07) == BPF_JMP) {
			const char *op = (code & 0xf0) == BPF_JEQ ? "jeq" : (code & 0xf0) == BPF_JGT ? "jgt"
			    : (code & 0xf0) == BPF_JGE ? "jge" : (code & 0xf0) == BPF_JSET ? "jset" : "ja";
			const char *val = NULL;

			if (strcmp(loaded, "arch") == 0)
				val = in->k == SBX_AUDIT_ARCH_X86_64 ? "AUDIT_ARCH_X86_64"
				    : in->k == SBX_AUDIT_ARCH_AARCH64 ? "AUDIT_ARCH_AARCH64" : NULL;
			else if (strcmp(loaded, "nr") == 0 && (code & 0xf0) == BPF_JEQ)
				val = bpf_syscall_name(p->arch, in->k);
			else if (strcmp(loaded, "arg") == 0 && r)
				val = bpf_value_name(r, name, sizeof(name));
			if (val)
				snprintf(text, sizeof(text), "%-4s %-16s true:%04u false:%04u", op, val,
				    i + 1 + in->jt, i + 1 + in->jf);
			else
				snprintf(text, sizeof(text), "%-4s 0x%-14x true:%04u false:%04u", op, in->k,
				    i + 1 + in->jt, i + 1 + in->jf);
		} else if (code == (BPF_RET | BPF_K)) {
			bpf_ret_name(in->k, name, sizeof(name));
			snprintf(text, sizeof(text), "ret %s", name);
			/* what follows a ret is reached only by a jump: from the
			 * syscall dispatch (A = nr), or to an ld */
			loaded = "nr";
		} else {
			snprintf(text, sizeof(text), "?");
		}
		fprintf(f, "%04u: 0x%02x 0x%02x 0x%02x 0x%08x  %-48s", i, code, in->jt, in->jf, in->k, text);
		if (r && code == (BPF_RET | BPF_K))
			fprintf(f, " ; %s: %s", sc_names[r->sc], r->why);
		else if (!r && i < 3)
			fprintf(f, " ; another ABI (i386 int 0x80, arm32 compat) is killed");
		else if (!r && p->arch->x32_alias && i >= 4 && i < 7)
			fprintf(f, " ; x32 syscall numbers (bit 30) are killed");
		fputc('\n', f);
	}
}

#endif /* SBX_SECCOMP_BPF_H */
