/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The event ABI between the BPF programs and flightrecd.
 *
 * Every record a BPF program puts into a per-CPU ring buffer starts with
 * struct fr_event_hdr.  Fixed-width types only; every size is pinned with
 * _Static_assert so a change of layout is a compile error on both sides,
 * and FR_EVENT_ABI is bumped with any change the daemon must know about.
 * This is the in-memory ABI only: the on-disk record format is the codec in
 * lib/record-codec.c, versioned separately by the store.
 */
#ifndef FR_BPF_EVENT_H
#define FR_BPF_EVENT_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#endif

#include "../lib/record-types.h"

#define FR_EVENT_ABI 7

/* TASK_COMM_LEN in the kernel. */
#define FR_COMM_LEN 16
/* Enough for nearly every path a binary is exec'd from; longer ones are cut
 * (and flagged), never dropped. */
#define FR_FILENAME_LEN 256
/* argv is copied as the NUL-separated block at mm->arg_start; 512 bytes keep
 * the exec record under 1 KiB while covering typical service command lines. */
#define FR_ARGS_LEN 512

/* The types of records the programs make: the store's record types of the
 * same names and numbers (lib/record-types.h, one list for both). */
#define FR_EV_ENUM_(name, number, str, flags) FR_EV_##name = number,
enum fr_event_type {
	FR_RECORD_TYPES_BPF(FR_EV_ENUM_)
	FR_EV__MAX,
};
#undef FR_EV_ENUM_

/* A ring event that is no store record: the waker of a long off-CPU
 * wait (struct fr_event_waker), which the daemon puts into the waiting
 * thread's offcpu record.  Above the store's BPF types, below 64. */
#define FR_EV_WAKER 63
/* Another: the description of a Python code object a stack's Python
 * frames name (struct fr_event_pycode), which the daemon keeps for the
 * records of its process that follow. */
#define FR_EV_PYCODE 62
/* Numbered by hand beside the list: the daemon tells them from records
 * by number, so no record type may take theirs. */
#define FR_EV_IS_(name, number, str, flags) + ((number) == FR_EV_WAKER || (number) == FR_EV_PYCODE)
_Static_assert(0 FR_RECORD_TYPES(FR_EV_IS_) == 0, "FR_EV_WAKER or FR_EV_PYCODE is a record type's number");
#undef FR_EV_IS_
_Static_assert(FR_EV_WAKER != FR_EV_PYCODE && FR_EV_WAKER < 64 && FR_EV_PYCODE < 64,
	       "ring-only events: two numbers of the BPF range, 1..63");
/* Sources: the unit that is switched on/off and counted (emitted, dropped). */
enum fr_source {
	FR_SRC_PROC = 0,    /* exec, fork, exit */
	FR_SRC_SYSCALL = 1, /* slow syscalls */
	FR_SRC_SCHED = 2,   /* off-CPU and run-queue latency */
	FR_SRC_BLOCK = 3,   /* slow block I/O requests */
	FR_SRC_OOM = 4,     /* OOM kills */
	FR_SRC_SIGNAL = 5,  /* fatal signals */
	FR_SRC_TCP = 6,     /* TCP retransmits and resets */
	FR_SRC_SAMPLE = 7,  /* CPU stack samples */
	FR_SRC__MAX,
};

struct fr_event_hdr {
	__u64 ts;        /* CLOCK_BOOTTIME ns (bpf_ktime_get_boot_ns) */
	__u64 cgroup_id; /* cgroup v2 id of the current task */
	__u32 pid;       /* tgid */
	__u32 tid;
	__u16 type;      /* enum fr_event_type */
	__u16 flags;     /* per type, FR_EXEC_* */
	__u32 pad;       /* off-CPU events: the task state it blocked in
			    (sched_switch's prev_state: 1 TASK_INTERRUPTIBLE,
			    2 TASK_UNINTERRUPTIBLE, | 0x400 TASK_NOLOAD for an
			    idle one, ...); else 0 */
	char comm[FR_COMM_LEN];
};
_Static_assert(sizeof(struct fr_event_hdr) == 48, "fr_event_hdr layout");

#define FR_EXEC_FILENAME_CUT (1u << 0)
#define FR_EXEC_ARGS_CUT (1u << 1)
/* off-CPU events: the task is a kernel thread (its waits are its idle
 * loop, unless in D) */
#define FR_OFFCPU_KTHREAD (1u << 0)
/* off-CPU events: a struct fr_event_waker was written for this wait (to
 * the ring of the CPU the wakeup ran on: it may be read after this one) */
#define FR_OFFCPU_WAKER (1u << 1)

struct fr_event_exec {
	struct fr_event_hdr hdr;
	__u32 ppid;
	__u16 filename_len; /* bytes in filename, without NUL */
	__u16 args_len;     /* bytes in args, NUL-separated */
	char filename[FR_FILENAME_LEN];
	char args[FR_ARGS_LEN];
};
_Static_assert(sizeof(struct fr_event_exec) == 48 + 8 + 256 + 512, "fr_event_exec layout");

struct fr_event_exit {
	struct fr_event_hdr hdr;
	__u32 exit_code; /* wait(2) status: (code << 8) | signal | 0x80 if core */
	__u32 pad;
};
_Static_assert(sizeof(struct fr_event_exit) == 56, "fr_event_exit layout");

struct fr_event_fork {
	struct fr_event_hdr hdr;
	__u32 child_pid;
	__u32 pad;
};
_Static_assert(sizeof(struct fr_event_fork) == 56, "fr_event_fork layout");

struct fr_event_syscall {
	struct fr_event_hdr hdr;
	__u64 duration_ns;
	__s64 ret;
	__u32 nr;
	__u32 pad;
};
_Static_assert(sizeof(struct fr_event_syscall) == 72, "fr_event_syscall layout");

/* off-CPU (blocked) and run-queue (runnable, waiting for a CPU) intervals,
 * reported for the task when it gets back on a CPU. */
struct fr_event_sched {
	struct fr_event_hdr hdr; /* the task that waited, not current */
	__u64 duration_ns;
	__s32 syscall_nr;        /* off-CPU: the system call it was blocked in,
				    -1 when none (or not known: see sched.bpf.c);
				    run queue: always -1 */
	__u32 pad;
};
_Static_assert(sizeof(struct fr_event_sched) == 64, "fr_event_sched layout");

/* Full scheduler mode: every context switch (header = prev, the task
 * leaving the CPU). */
struct fr_event_switch {
	struct fr_event_hdr hdr;
	__u32 prev_state;        /* 0 = preempted while runnable */
	__u32 next_pid, next_tid;
	__u32 pad;
	char next_comm[FR_COMM_LEN];
};
_Static_assert(sizeof(struct fr_event_switch) == 48 + 32, "fr_event_switch layout");

/* Switch records are not written to the ring one by one: each CPU
 * gathers them in its struct fr_switch_batch and writes them as one ring
 * record, FR_SWITCH_BATCH (or fewer) fr_event_switch back to back.  A
 * ring reservation and commit cost about as much as the record itself
 * (two atomic operations and a lock; measured in BENCHMARKS.md).  The
 * batch is written when it is full, when its CPU goes idle (so an idle
 * CPU holds none back), and when the daemon asks, before each drain
 * (BPF_PROG_TEST_RUN of fr_switch_flush on that CPU): a record waits for
 * a drain interval at most. */
#define FR_SWITCH_BATCH 16

struct fr_switch_batch {
	__u32 n; /* records held; read by the daemon (mmap) to know which
		    CPUs to ask */
	__u32 pad[15];
	struct fr_event_switch rec[FR_SWITCH_BATCH];
};
_Static_assert(sizeof(struct fr_switch_batch) == 64 + 16 * 80, "fr_switch_batch layout");

/* Kernel stack depth kept: 32 frames reach the system call or interrupt
 * entry from nearly every point of the kernel. */
#define FR_STACK_DEPTH 32

/* User stacks are not walked in BPF: frame pointers are missing from most
 * distribution binaries, so the walk stops after a frame or two.  Instead
 * the sampler copies the user registers and the top of the user stack, and
 * flightrecd unwinds them with the binaries' unwind tables (.eh_frame) at
 * the next drain, while the process and its mappings still exist; only the
 * unwound return addresses are stored.  16 KiB of stack reach main() in
 * python3, xz, gzip and typical services (perf's --call-graph dwarf copies
 * 8 KiB by default); the copy ends at the end of the stack's mapping. */
#define FR_USTACK_COPY 16384
/* x86-64 user registers in DWARF numbering: rax, rdx, rcx, rbx, rsi, rdi,
 * rbp, rsp, r8-r15, and the return address column, rip. */
#define FR_UREGS 17

/* Python frames (bpf/python.bpf.h).  A CPython thread's frames are a
 * chain in its memory that the BPF programs walk where they copy a user
 * stack, for executables the daemon found to be a CPython it knows (the
 * py_exes map: its _PyRuntime, and the version's offsets); the daemon
 * names each code object from a struct fr_event_pycode, and puts the
 * frames in place of the interpreter's native frames. */
#define FR_PY_DEPTH 64

/* Where the fields BPF reads are, for one CPython version (daemon:
 * lib/python-offsets.c), in bytes. */
struct fr_py_offsets {
	__u16 runtime_interp_head;   /* _PyRuntimeState.interpreters.head */
	__u16 interp_next;           /* PyInterpreterState.next */
	__u16 interp_threads_head;   /* PyInterpreterState.threads.head */
	__u16 tstate_next;           /* PyThreadState.next */
	__u16 tstate_thread_id;      /* PyThreadState.thread_id (pthread_self) */
	__u16 tstate_cframe;         /* PyThreadState.cframe */
	__u16 cframe_current_frame;  /* _PyCFrame.current_frame */
	__u16 frame_code;            /* _PyInterpreterFrame.f_code */
	__u16 frame_previous;        /* _PyInterpreterFrame.previous */
	__u16 frame_prev_instr;      /* _PyInterpreterFrame.prev_instr */
	__u16 frame_is_entry;        /* _PyInterpreterFrame.is_entry (u8) */
	__u16 code_firstlineno;      /* PyCodeObject.co_firstlineno (int) */
	__u16 code_filename;         /* PyCodeObject.co_filename */
	__u16 code_qualname;         /* PyCodeObject.co_qualname */
	__u16 code_linetable;        /* PyCodeObject.co_linetable (bytes) */
	__u16 code_code;             /* PyCodeObject.co_code_adaptive */
	__u16 unicode_length;        /* PyASCIIObject.length */
	__u16 unicode_state;         /* PyASCIIObject.state (u32) */
	__u16 unicode_ascii_data;    /* sizeof(PyASCIIObject) */
	__u16 unicode_compact_data;  /* sizeof(PyCompactUnicodeObject) */
	__u16 bytes_size;            /* PyVarObject.ob_size */
	__u16 bytes_data;            /* PyBytesObject.ob_sval */
	__u16 pad[2];
};
_Static_assert(sizeof(struct fr_py_offsets) == 48, "fr_py_offsets layout");

/* The py_exes map: key, the executable as BPF sees it (its inode's
 * superblock dev_t, in the kernel's encoding, and inode number); value,
 * where its _PyRuntime is from the start of its text (mm->start_code
 * less the lowest executable segment's address is the load bias) and the
 * version's offsets. */
struct fr_py_exe_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};
struct fr_py_exe {
	__u64 runtime_rel; /* _PyRuntime - lowest PF_X p_vaddr */
	__u32 version;     /* PY_VERSION_HEX */
	__u32 pad;
	struct fr_py_offsets off;
};

/* The py_seen map's key: a code object described to the daemon from a
 * CPU, for a process (its start time and exec count tell a reused pid,
 * and an exec, apart); the value is the code object's identity then.
 * 16384 of them: each a few a second at most once warm (~1.4 MiB). */
struct fr_py_seen_key {
	__u32 tgid;
	__u32 cpu;
	__u64 start;
	__u64 code;
	__u32 exec_id;
	__u32 pad;
};
#define FR_PY_SEEN_MAX 16384
/* The py_threads map: a thread's Python thread state, by tid. */
#define FR_PY_THREADS_MAX 4096

/* One Python frame: its code object, and the instruction it is at. */
struct fr_py_frame {
	__u64 code;   /* PyCodeObject * */
	__s32 lasti;  /* code unit of the instruction (prev_instr), -1 before the first */
	__u32 flags;  /* FR_PY_ENTRY */
};
/* The frame a C call of the interpreter loop (_PyEval_EvalFrameDefault)
 * began with: the frames up to it, innermost first, are that native
 * frame's. */
#define FR_PY_ENTRY 1u

/* What the walk of a thread's Python frames came to (status), counted
 * by the daemon. */
enum fr_py_status {
	FR_PY_NOT_PYTHON = 0, /* not an executable known to be CPython */
	FR_PY_WALKED = 1,     /* n frames, the whole chain */
	FR_PY_CUT = 2,        /* the first FR_PY_DEPTH frames of a longer chain */
	FR_PY_NO_THREAD = 3,  /* this thread has no Python thread state (a native
				 thread of a Python process, or one just starting) */
	FR_PY_NO_FRAME = 4,   /* it has, and runs no Python code */
	FR_PY_UNREADABLE = 5, /* a read of its memory failed (paged out, or
				 a state in transition) */
	FR_PY__STATUS_MAX,
};

struct fr_py_stack {
	__u16 n;
	__u8 status;  /* enum fr_py_status */
	__u8 names_over; /* frames whose code went undescribed: over the budget */
	__u32 pad;
	struct fr_py_frame f[FR_PY_DEPTH];
};
_Static_assert(sizeof(struct fr_py_stack) == 8 + 16 * FR_PY_DEPTH, "fr_py_stack layout");

/* The description of a code object, once per process, code object and
 * CPU (the daemon reads each CPU's ring in order, so a stack's codes are
 * described before it): strings as CPython holds them (kind 1: Latin-1,
 * 2: UCS-2, 4: UCS-4; 0: not read), the file name's last bytes when it is
 * longer, and the line table (co_linetable) for the lines of
 * instructions. */
#define FR_PY_NAME_MAX 256
#define FR_PY_FILE_MAX 256
#define FR_PY_LINES_MAX 1024
struct fr_event_pycode {
	struct fr_event_hdr hdr; /* the process; type FR_EV_PYCODE */
	__u64 code;
	__s32 firstlineno;
	__u16 lines_len;   /* bytes of lines */
	__u8 name_kind, file_kind;
	__u16 name_len, file_len; /* bytes of name and file */
	__u8 name_cut, file_cut, lines_cut; /* longer than copied (the file: its start cut) */
	__u8 pad;
	__u8 name[FR_PY_NAME_MAX];
	__u8 file[FR_PY_FILE_MAX];
	__u8 lines[FR_PY_LINES_MAX];
};
_Static_assert(sizeof(struct fr_event_pycode) == 48 + 24 + FR_PY_NAME_MAX + FR_PY_FILE_MAX + FR_PY_LINES_MAX,
	       "fr_event_pycode layout");

/* A CPU sample: the kernel stack of the task on the CPU, leaf first, as
 * instruction addresses, and what unwinding its user stack needs. */
struct fr_event_sample {
	struct fr_event_hdr hdr;
	__u16 kernel_frames;
	__u16 user_mode;  /* 1: the sample interrupted user code (uregs[16] is
			     the interrupted instruction); 0: kernel code,
			     uregs are where the task entered the kernel */
	__u32 ustack_len; /* bytes of the user stack copied, from uregs[7] */
	__u64 exe_ino;    /* inode of the running executable: which image the
			     user frames belong to (0: none, a kernel thread) */
	__u32 ppid;       /* the parent process: a forked child that exits
			     before its maps are read has its parent's */
	__u32 exe_dev;    /* its inode's superblock dev_t (kernel encoding):
			     with exe_ino, the key of py_exes */
	__u64 kstack[FR_STACK_DEPTH];
	__u64 uregs[FR_UREGS]; /* all 0 for a kernel thread */
	struct fr_py_stack py; /* its Python frames */
	__u8 ustack[FR_USTACK_COPY];
};
_Static_assert(sizeof(struct fr_event_sample) ==
		       48 + 24 + 8 * FR_STACK_DEPTH + 8 * FR_UREGS + sizeof(struct fr_py_stack) + FR_USTACK_COPY,
	       "fr_event_sample layout");

/* An off-CPU wait over its threshold, with its stacks (when
 * sources.sched.offcpu_stacks is on; else struct fr_event_sched): the
 * kernel stack the task slept in, taken at the switch that ends the wait,
 * and what unwinding its user stack needs, copied when the task returns
 * to user space (sched.bpf.c).  The user stack copy follows the struct
 * when ustack_len is not 0: records without one are this size, records
 * with one this size + FR_USTACK_COPY, then its Python frames (struct
 * fr_py_stack). */
enum fr_offcpu_user {
	FR_OFFCPU_USER_COPIED = 0,     /* uregs and ustack[ustack_len] */
	FR_OFFCPU_USER_KTHREAD = 1,    /* a kernel thread or an io_uring worker:
					  no user stack */
	FR_OFFCPU_USER_NO_TASK_WORK = 2, /* the kernel has no BPF task work:
					  uregs only (the user leaf frame) */
	FR_OFFCPU_USER_BUSY = 3,       /* too many waits ending at once (or the
					  task's previous copy still pending):
					  uregs only */
	FR_OFFCPU_USER_UNREADABLE = 4, /* the task returned to user space with
					  its stack unreadable (exiting): uregs only */
	FR_OFFCPU_USER__MAX,
};

/* Off-CPU waits per CPU whose user stack copy may be pending at once
 * (sched.bpf.c): a copy takes from the end of the wait to the task's
 * return to user space, microseconds. */
#define FR_OFFCPU_SLOTS 16

struct fr_event_offcpu {
	struct fr_event_hdr hdr; /* the task that waited */
	__u64 duration_ns;
	__s32 syscall_nr;        /* as in struct fr_event_sched */
	__u16 kernel_frames;
	__u16 user;              /* enum fr_offcpu_user */
	__u64 exe_ino;           /* as in struct fr_event_sample */
	__u32 ppid;
	__u32 ustack_len;        /* bytes of ustack, from uregs[7] */
	__u64 kstack[FR_STACK_DEPTH];
	__u64 uregs[FR_UREGS];   /* where it entered the kernel; 0 for a kernel thread */
	__u8 ustack[];
};
_Static_assert(sizeof(struct fr_event_offcpu) == 48 + 32 + 8 * FR_STACK_DEPTH + 8 * FR_UREGS,
	       "fr_event_offcpu layout");

/* Who woke a thread whose off-CPU wait was over the threshold, taken
 * at the wakeup (sched_waking) on the waker's CPU, in its context: the
 * header is the task running there (pid 0 and no stack for the idle
 * task), its ts the time of the wakeup.  In an interrupt, that task is
 * only the one interrupted: the context says so, the kernel stack is
 * the interrupt's, and there is no user stack.  The user stack copy
 * follows the struct when ustack_len is not 0, as an offcpu record's (then its Python
 * frames). */
enum fr_waker_context {
	FR_WAKER_TASK = 0,    /* a user task, in a system call */
	FR_WAKER_KTHREAD = 1, /* a kernel thread (kworker, jbd2, ...), or a
				 softirq it runs (ksoftirqd) */
	FR_WAKER_HARDIRQ = 2, /* off the task's stack: an interrupt (a device,
				 a timer, an IPI, the softirqs on its exit) */
	FR_WAKER_SOFTIRQ = 3, /* (not told apart in BPF: readers, by the frames) */
	FR_WAKER_NMI = 4,     /* (the same) */
	FR_WAKER_UNKNOWN = 5, /* a user task not in a system call: a fault,
				 or an interrupt that came in user mode, which
				 runs on the task's stack (readers: the frames) */
	FR_WAKER__MAX,
};
/* hdr.flags of a waker event: its stacks were over the per-CPU budget */
#define FR_WAKER_NO_STACK (1u << 0)
struct fr_event_waker {
	struct fr_event_hdr hdr;  /* the waker (see above) */
	__u32 wakee_pid, wakee_tid;
	__u64 wait_start;         /* the wakee's offcpu record's ts: what joins them */
	__u16 kernel_frames;
	__u16 context;            /* enum fr_waker_context */
	__u32 ustack_len;         /* bytes of ustack, from uregs[7] */
	__u64 exe_ino;            /* the waker's image (struct fr_event_sample); 0: no user stack */
	__u32 ppid;
	__u32 pad;
	__u64 kstack[FR_STACK_DEPTH];
	__u64 uregs[FR_UREGS];
	__u8 ustack[];
};
_Static_assert(sizeof(struct fr_event_waker) == 48 + 40 + 8 * FR_STACK_DEPTH + 8 * FR_UREGS,
	       "fr_event_waker layout");
struct fr_event_block {
	struct fr_event_hdr hdr; /* the task that issued the request */
	__u64 duration_ns;       /* issue -> complete */
	__u64 sector;
	__u32 dev;               /* MKDEV(major, minor) of the disk, kernel encoding */
	__u32 bytes;
	__u32 op;                /* REQ_OP_* */
	__s32 error;             /* blk_status_t, 0 = ok */
};
_Static_assert(sizeof(struct fr_event_block) == 48 + 32, "fr_event_block layout");

/* A cgroup directory name (NAME_MAX would be 255; names of services and
 * containers fit in 64, longer ones are cut). */
#define FR_CGROUP_NAME_LEN 64

struct fr_event_oom {
	struct fr_event_hdr hdr; /* the victim */
	__u64 rss_pages;
	__u64 memcg_id;          /* kernfs id of the victim's memory cgroup */
	char memcg_name[FR_CGROUP_NAME_LEN]; /* its leaf name: survives its removal */
};
_Static_assert(sizeof(struct fr_event_oom) == 64 + FR_CGROUP_NAME_LEN, "fr_event_oom layout");

/* A fatal signal as it is generated, with the stack of the task that
 * generated it (current, not the target): for a fault the faulting
 * thread itself, so the crash site; for kill(), tgkill() or abort() the
 * sender's call site.  The user stack copy follows the struct when
 * ustack_len is not 0, as an offcpu record's (then its Python frames). */
enum fr_signal_stack {
	FR_SIGNAL_STACK_COPIED = 0,  /* kstack, uregs, ustack[ustack_len] */
	FR_SIGNAL_STACK_KERNEL = 1,  /* the sender is a kernel thread: kstack only */
	FR_SIGNAL_STACK_SKIPPED = 2, /* over the per-CPU budget (stack_budget): no stack */
	FR_SIGNAL_STACK__MAX,
};

/* hdr.flags of a signal record: addr is the fault address (si_addr) */
#define FR_SIGNAL_ADDR (1u << 0)

struct fr_event_signal {
	struct fr_event_hdr hdr; /* the target */
	__u32 sig;
	__u32 sender_pid;
	__s32 code;              /* si_code */
	__s32 result;            /* TRACE_SIGNAL_* */
	char sender_comm[FR_COMM_LEN];
	__u32 sender_tid;
	__u16 kernel_frames;     /* of the sender */
	__u16 stack;             /* enum fr_signal_stack */
	__u64 addr;              /* si_addr, with FR_SIGNAL_ADDR */
	__u64 exe_ino;           /* the sender's image (struct fr_event_sample) */
	__u32 ppid;              /* the sender's parent */
	__u32 ustack_len;        /* bytes of ustack, from uregs[7] */
	__u64 kstack[FR_STACK_DEPTH];
	__u64 uregs[FR_UREGS];   /* the sender's user registers, where it entered the kernel */
	__u8 ustack[];
};
_Static_assert(sizeof(struct fr_event_signal) == 48 + 32 + 32 + 8 * FR_STACK_DEPTH + 8 * FR_UREGS,
	       "fr_event_signal layout");

/* Per-device block latency histogram: slot n counts requests that took
 * [2^n, 2^(n+1)) microseconds (slot 0 also < 1 us); 32 slots reach past an
 * hour.  One per disk in a PERCPU_HASH keyed by dev. */
#define FR_LAT_SLOTS 32
struct fr_lat_hist {
	__u64 slots[FR_LAT_SLOTS];
};

enum fr_tcp_event { FR_TCP_RETRANSMIT = 1, FR_TCP_RESET_SENT = 2, FR_TCP_RESET_RECEIVED = 3 };

struct fr_event_tcp {
	struct fr_event_hdr hdr; /* current task: may be unrelated (softirq) */
	__u8 saddr[16];          /* IPv4 in the first 4 bytes when family is 2 */
	__u8 daddr[16];
	__u16 family;            /* AF_INET, AF_INET6 */
	__u16 sport, dport;      /* host order */
	__u8 event;              /* enum fr_tcp_event */
	__u8 state;              /* TCP_* state of the socket */
};
_Static_assert(sizeof(struct fr_event_tcp) == 48 + 40, "fr_event_tcp layout");

/* Per CPU and per source, in a PERCPU_ARRAY indexed by enum fr_source.
 * emitted counts every record a program tried to write; dropped the ones
 * bpf_ringbuf_reserve refused.  delivered = emitted - dropped. */
struct fr_counters {
	__u64 emitted;
	__u64 dropped;
	/* Calls that could not be timed because per-thread state could not be
	 * allocated: a slow call among them would be missed, so they are a loss
	 * too, reported next to dropped. */
	__u64 untracked;
};
_Static_assert(sizeof(struct fr_counters) == 24, "fr_counters layout");

/* Syscall numbers covered by the exclude bitmap; x86_64 has < 512 and the
 * numbers above are the compat/x32 ranges we do not trace. */
#define FR_SYSCALL_MAX 512

#endif
