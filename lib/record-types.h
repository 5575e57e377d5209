/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every record type, once: its number (part of the store format and of the
 * BPF event ABI), and its name (dump --type, JSON's "type", the docs).
 * What lists record types is made from these lists: the BPF ABI's enum
 * (FR_EV_*, bpf/event.h) and the store's (FR_REC_*, record.h), the names,
 * fr_record_type_is_meta(), _has_stack() and _is_description(),
 * `frctl --list-types` (and the shell completion, which asks it).  A new
 * type is one line here; the record's writers switch on enum
 * fr_record_type with -Wswitch-enum, so the compiler then names each one
 * that has to learn it, and tests/integration/test-record-types.sh each
 * document that lacks it.
 *
 * Macros only: the BPF programs include it too.  Each list calls
 * X(NAME, number, "name", flags).
 */
#ifndef FR_RECORD_TYPES_H
#define FR_RECORD_TYPES_H

#define FR_RT_STACK 1u    /* carries a stack (r->stack) */
#define FR_RT_DURATION 2u /* a wait or a call: has duration_ns */
/* names what other records refer to (a cgroup id, a code address), once
 * per chunk: a chunk's writer writes it once, its reader keeps it in a
 * table (fr_record_described_id() says its key) */
#define FR_RT_DESCRIPTION 4u

/* Recorded by the BPF programs: 1..63, the same numbers in both enums. */
#define FR_RECORD_TYPES_BPF(X)                          \
	X(EXEC, 1, "exec", 0)                           \
	X(EXIT, 2, "exit", 0)                           \
	X(FORK, 3, "fork", 0)                           \
	X(SYSCALL, 4, "syscall", FR_RT_DURATION)        \
	X(OFFCPU, 5, "offcpu", FR_RT_STACK | FR_RT_DURATION) \
	X(RUNQ, 6, "runq", FR_RT_DURATION)              \
	X(BLOCK, 7, "block", FR_RT_DURATION)            \
	X(OOM, 8, "oom", 0)                             \
	X(SIGNAL, 9, "signal", FR_RT_STACK)             \
	X(TCP, 10, "tcp", 0)                            \
	X(SWITCH, 11, "switch", 0)                      \
	X(SAMPLE, 12, "sample", FR_RT_STACK)

/* Made in user space, 64.., printed like the others:
 *   gap      records lost on this CPU since the previous gap
 *   mark     an annotation (frctl mark, the annotation socket); the
 *            daemon's own start and stop, pid 0: FR_MARK_STARTED /
 *            FR_MARK_STOPPED "(pid N)" (record.h)
 *   metrics  system metrics, a JSON object
 *   trigger  a trigger rule fired: rule, incident */
#define FR_RECORD_TYPES_USER(X) \
	X(GAP, 64, "gap", 0)    \
	X(MARK, 67, "mark", 0)  \
	X(METRICS, 68, "metrics", 0) \
	X(TRIGGER, 69, "trigger", 0)

/* Metadata that readers consume rather than print (never a --type):
 *   cgroup   cgroup id -> path, once per chunk
 *   process  a live process, in keyframes
 *   mapping  an executable mapping of pid, once per chunk
 *   symbol   a function of pid (0: the kernel), once per chunk
 *   inline   the functions inlined at one code address of pid, once per chunk
 *   pycode   a Python code object of pid (name, file, first line), once per chunk */
#define FR_RECORD_TYPES_META(X)                  \
	X(CGROUP, 65, "cgroup", FR_RT_DESCRIPTION)   \
	X(PROCESS, 66, "process", 0)                 \
	X(MAPPING, 70, "mapping", FR_RT_DESCRIPTION) \
	X(SYMBOL, 71, "symbol", FR_RT_DESCRIPTION)   \
	X(INLINE, 72, "inline", FR_RT_DESCRIPTION)   \
	X(PYCODE, 73, "pycode", FR_RT_DESCRIPTION)

/* The types a person selects and reads: dump --type, JSON's "type". */
#define FR_RECORD_TYPES_PRINTED(X) FR_RECORD_TYPES_BPF(X) FR_RECORD_TYPES_USER(X)
#define FR_RECORD_TYPES(X) FR_RECORD_TYPES_PRINTED(X) FR_RECORD_TYPES_META(X)

#endif
