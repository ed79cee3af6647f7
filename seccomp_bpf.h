/* seccomp_bpf.h: classic BPF for seccomp, without the Linux headers.
 *
 * sbx assembles its seccomp programs itself (no libseccomp). This header
 * holds what every part of that needs and what the macOS build must compile
 * without the <linux/...> headers: the instruction encoding, the seccomp_data layout and
 * the return actions. The syscall tables, the rule tables, the assembler and
 * the disassembler behind --print=bpf are added here with the seccomp filters.
 */
#ifndef SBX_SECCOMP_BPF_H
#define SBX_SECCOMP_BPF_H

#include <stddef.h>
#include <stdint.h>

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

#endif /* SBX_SECCOMP_BPF_H */
