/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A decoded record, as user space sees it: the one shape the daemon encodes
 * from and frctl prints from.  String fields point into the buffer the record
 * was decoded from and live as long as it does.
 */
#ifndef FR_RECORD_H
#define FR_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "record-types.h"

/* The text of the marks the daemon writes when it starts and stops
 * recording, followed by "(pid N)": readers (frctl dump -f) tell restarts
 * by them. */
#define FR_MARK_STARTED "flightrecd started recording "
#define FR_MARK_STOPPED "flightrecd stopped recording "

/* On-disk record types (lib/record-types.h): 1..63 are the BPF ABI's
 * enum fr_event_type; 64.. are made in user space.  Numbers are part of
 * the store format. */
#define FR_REC_ENUM_(name, number, str, flags) FR_REC_##name = number,
enum fr_record_type { FR_RECORD_TYPES(FR_REC_ENUM_) };
#undef FR_REC_ENUM_

/* Longest build id kept (GNU build ids are 20 bytes; others up to 64). */
#define FR_BUILD_ID_MAX 64

#define FR_REC_COMM_MAX 16

/* Longest names of an FR_REC_INLINE record: a deep chain of inlined
 * templates fits, and a hostile length is refused before it is used. */
#define FR_INLINE_NAMES_MAX 4096

/* Length of a task name in a 16-byte field, up to its first NUL: two
 * 8-byte words tested for a zero byte at once (the daemon does this two or
 * three times per context switch; strnlen's call was 7 % of its CPU).  The
 * lowest flagged byte is the first NUL: the borrow that can flag a byte
 * falsely only runs upwards from a real zero. */
static inline uint8_t fr_comm_len(const char *comm)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t w[2];

	memcpy(w, comm, sizeof(w));
	for (unsigned i = 0; i < 2; i++) {
		uint64_t z = (w[i] - ones) & ~w[i] & highs;
		if (z)
			return (uint8_t)(8 * i + (unsigned)__builtin_ctzll(z) / 8);
	}
	return FR_REC_COMM_MAX;
#else
	return (uint8_t)strnlen(comm, FR_REC_COMM_MAX);
#endif
}

/* The task states of an offcpu record (include/linux/sched.h): an
 * interruptible sleep waits for something that may never come (a request,
 * a timer), an uninterruptible one for something under way (I/O, a page,
 * a kernel lock), unless it is also NOLOAD (TASK_IDLE: a kernel thread's
 * idle loop). */
#define FR_TASK_INTERRUPTIBLE 0x0001u
#define FR_TASK_UNINTERRUPTIBLE 0x0002u
#define FR_TASK_NOLOAD 0x0400u

/* flags */
#define FR_REC_F_FILENAME_CUT (1u << 0)
#define FR_REC_F_ARGS_CUT (1u << 1)
/* A TCP record whose addresses frctl --redact cut (lib/redact.c): they
 * are zeros, and readers print them as "[redacted]" */
#define FR_REC_F_ADDR_REDACTED (1u << 2)
/* A signal record whose signal.addr is the fault address (si_addr) */
#define FR_REC_F_FAULT_ADDR (1u << 3)
/* On disk only (FR_CHUNK_INCOMPAT_RECORD_EXT): the record has an
 * extension, skipped by this reader (lib/record-codec.c) */
#define FR_REC_F_EXT (1u << 7)

/* Who ended an offcpu record's wait (sched.waker.context): the numbers
 * of enum fr_waker_context of bpf/event.h, plus one; 0: not recorded. */
enum { FR_WAKER_NONE = 0,    /* not recorded (wakers off, or lost) */
       FR_WAKER_IS_TASK = 1, /* a user task, in its own context */
       FR_WAKER_IS_KTHREAD = 2,
       FR_WAKER_IS_HARDIRQ = 3, /* pid/comm: the task it interrupted */
       FR_WAKER_IS_SOFTIRQ = 4, /* the same */
       FR_WAKER_IS_NMI = 5,
       FR_WAKER_IS_UNKNOWN = 6, /* a task, or an interrupt of it: the kernel did not say */
       FR_WAKER_KINDS,
};

/* What a signal record's stack is (signal.stack): the same numbers as
 * enum fr_signal_stack of bpf/event.h. */
enum { FR_SIGNAL_STACK_TAKEN = 0,   /* the sender's stacks, as recorded */
       FR_SIGNAL_STACK_KTHREAD = 1, /* the sender is a kernel thread: kernel frames only */
       FR_SIGNAL_STACK_OVER = 2,    /* none: over the per-CPU budget of stacks a second */
       FR_SIGNAL_STACK_NONE = 3,    /* none: a chunk from before signal stacks */
};

struct fr_record {
	uint16_t type;
	uint16_t flags;
	uint32_t cpu;
	uint64_t ts; /* CLOCK_BOOTTIME ns */
	uint32_t pid;
	uint32_t tid;
	uint64_t cgroup_id;
	uint8_t comm_len;
	char comm[FR_REC_COMM_MAX + 1]; /* NUL-terminated */
	/* sample, offcpu and signal records: the stack, kernel frames then
	 * user frames, each leaf first (for offcpu: where the task slept, and
	 * where it entered the kernel; for signal: the sender's, whose
	 * process is fr_record_stack_pid()); both counts 0 when none */
	struct {
		uint16_t kernel_frames, user_frames;
		const uint64_t *kframes, *uframes; /* encoding input */
		const uint8_t *enc; /* decoded: see fr_record_frames() */
		uint32_t enc_len;
	} stack;
	union {
		struct {
			uint32_t ppid;
			uint32_t filename_len;
			uint32_t args_len;
			const char *filename; /* not NUL-terminated */
			const char *args;     /* NUL-separated argv */
		} exec;
		struct {
			uint32_t status; /* wait(2) status */
		} exit;
		struct {
			uint32_t child_pid;
		} fork;
		struct {
			uint32_t nr;
			uint64_t duration_ns;
			int64_t ret;
		} syscall;
		struct {
			uint64_t duration_ns;
			/* offcpu: the system call the task was blocked in, -1
			 * when none or not known (and in runq records) */
			int32_t syscall_nr;
			/* offcpu: the task state it blocked in (prev_state of
			 * sched_switch: FR_TASK_*), 0 when not known (records
			 * from before it was recorded, and runq records) */
			uint32_t state;
			/* offcpu: the task is a kernel thread (false when not
			 * known: as state) */
			bool kthread;
			/* offcpu: who woke it, taken at the wakeup (context
			 * 0: not recorded); its stack as the record's own
			 * (see there), in the address space of waker.pid */
			struct fr_record_waker {
				uint8_t context;  /* FR_WAKER_* */
				bool no_stack;    /* over the stack budget: none taken */
				uint8_t comm_len;
				uint32_t pid, tid;
				const char *comm; /* not NUL-terminated */
				uint64_t delay_ns; /* the wakeup's time less the record's ts */
				struct {
					uint16_t kernel_frames, user_frames;
					const uint64_t *kframes, *uframes;
					const uint8_t *enc;
					uint32_t enc_len;
				} stack;
			} waker;
		} sched; /* offcpu, runq */
		struct {
			uint32_t prev_state;
			uint32_t next_pid, next_tid;
			uint32_t next_comm_len;
			const char *next_comm;
		} sw;
		struct {
			uint32_t dev; /* kernel dev_t: major << 20 | minor */
			uint32_t op;
			uint64_t sector;
			uint32_t bytes;
			int32_t error;
			uint64_t duration_ns;
		} block;
		struct {
			uint64_t rss_kb;
			uint64_t memcg_id;
			uint32_t memcg_len;
			const char *memcg; /* path, may be empty */
		} oom;
		struct {
			uint32_t sig;
			uint32_t sender_pid;
			int32_t code;
			int32_t result;
			uint32_t sender_comm_len;
			const char *sender_comm;
			uint32_t sender_tid;
			uint8_t stack; /* FR_SIGNAL_STACK_* */
			uint64_t addr; /* with FR_REC_F_FAULT_ADDR */
		} signal;
		struct {
			uint8_t event; /* FR_TCP_* of bpf/event.h */
			uint8_t state;
			uint16_t family;
			uint16_t sport, dport;
			uint8_t saddr[16], daddr[16];
		} tcp;
		struct {
			uint32_t text_len;
			const char *text;
		} mark;
		struct {
			uint32_t json_len;
			const char *json; /* one JSON object */
		} metrics;
		struct {
			uint32_t rule_len, incident_len;
			const char *rule, *incident;
			/* the record the rule fired on: its type, and how
			 * long before this record's ts its own ts is (type
			 * 0: not said, in chunks written before) */
			uint16_t cause_type;
			int64_t cause_ago_ns;
		} trigger;
		struct {
			uint64_t lost;
		} gap;
		struct {
			uint32_t path_len;
			const char *path; /* not NUL-terminated */
		} cgroup;
		struct {
			uint64_t start, end; /* [start, end) in pid's address space */
			uint64_t offset;     /* file offset of start */
			uint64_t vaddr;      /* ELF address of start (= offset when unknown) */
			uint32_t path_len, build_id_len;
			const char *path;    /* as in /proc/PID/maps, or "[vdso]" */
			const uint8_t *build_id;
		} mapping;
		struct {
			uint64_t start;   /* in the address space of pid (0: kernel) */
			uint64_t size;
			uint32_t name_len, module_len;
			const char *name;
			const char *module; /* kernel symbols: "" or the module's name */
		} symbol;
		struct {
			uint64_t addr;       /* a frame's lookup address (fr_frame_lookup_addr) in pid's address space */
			uint32_t names_len;  /* bytes in names */
			const char *names;   /* the inlined functions' names, innermost first, NUL-separated (no NUL after the last) */
		} inl;
		struct {
			uint64_t code;      /* the code object's address in pid's memory */
			int32_t firstlineno;
			uint32_t name_len, file_len;
			const char *name;   /* its qualified name (co_qualname), UTF-8 */
			const char *file;   /* its file (co_filename), UTF-8; one cut
					       to its end starts with "..." */
		} pycode;
		struct {
			uint32_t ppid;
			uint32_t exe_len;
			uint32_t args_len;
			const char *exe;  /* empty for kernel threads */
			const char *args; /* NUL-separated argv */
		} process;
	};
};

/* Zero @rec.  Copied from a zero record, not memset: GCC makes a memset
 * of this size a rep stos, whose start-up costs more than decoding or
 * recording a small record's fields. */
static inline void fr_record_clear(struct fr_record *rec)
{
	static const struct fr_record zero;

	*rec = zero;
}

/* The case labels of the metadata types, for a switch on enum
 * fr_record_type that has nothing to do for them. */
#define FR_REC_LABEL_(name, number, str, flags) case FR_REC_##name:
#define FR_REC_META_CASES FR_RECORD_TYPES_META(FR_REC_LABEL_)

/* Is this record metadata that readers consume rather than print? */
static inline int fr_record_type_is_meta(uint16_t type)
{
	switch ((enum fr_record_type)type) {
	FR_REC_META_CASES
		return 1;
	FR_RECORD_TYPES_PRINTED(FR_REC_LABEL_)
		return 0;
	}
	return 0; /* a number no type has */
}

/* The FR_RT_* flags of @type (record-types.h); 0 for a type not known. */
static inline unsigned fr_record_type_flags(uint16_t type)
{
	switch (type) {
#define FR_REC_CASE_(name, number, str, flags) case number: return flags;
	FR_RECORD_TYPES(FR_REC_CASE_)
#undef FR_REC_CASE_
	}
	return 0;
}

/* "exec", ...; "unknown" for a number no type has. */
const char *fr_record_type_name(uint16_t type);
/* Type name -> number, or -EINVAL. */
int fr_record_type_from_name(const char *name);
/* The types a person selects and reads (dump --type), in the order of
 * record-types.h: *n of them. */
const uint16_t *fr_record_types_printed(unsigned *n);

/* Encoding state carried between records of one chunk: delta timestamps,
 * and the chunk's incompatible flags (FR_CHUNK_INCOMPAT_* of
 * store-format.h), which say what optional fields its records carry: set
 * them from the chunk header before decoding, and to what the header will
 * say before encoding.  Zero is the format before any such flag. */
struct fr_codec_state {
	uint64_t prev_ts;
	uint32_t incompat_flags;
	uint64_t unknown; /* records of types not known, skipped */
};

/* Most frames a sample holds (kernel + user). */
#define FR_SAMPLE_FRAMES_MAX 128

/* User frame "addresses" below this are not addresses but why the user stack ends there. */
#define FR_FRAME_MARKER_MAX 16
enum { FR_FRAME_TRUNCATED = 1,      /* "[truncated]": the depth limit or the end of the stack copy */
       FR_FRAME_NO_UNWIND_INFO = 2, /* "[no unwind info]": no CFI and no frame pointer chain for the next frame */
       FR_FRAME_UNWIND_FAILED = 3,  /* "[unwind failed]": the process's memory map could not be read (process gone) */
       FR_FRAME_NOT_CAPTURED = 4,   /* "[user stack not captured]": an off-CPU wait whose user stack could not
				       be copied (kernel without BPF task work, too many at once, task exiting) */
};

/* A user frame that is a Python frame (bpf/python.bpf.h) is no address:
 * bit 63 set (no user address has it; kernel frames, which all have it,
 * are never Python frames), the code object's address over 16
 * (they are 16-byte aligned) in bits 20-62, and the line in bits 0-19
 * (0: not known).  The chunk's pycode record of the code object names
 * it. */
#define FR_FRAME_PYTHON (1ULL << 63)
#define FR_FRAME_PYTHON_LINE_MAX 0xfffffu

static inline bool fr_frame_is_python(uint64_t addr)
{
	return (addr & FR_FRAME_PYTHON) != 0;
}

static inline uint64_t fr_frame_python(uint64_t code, uint32_t line)
{
	return FR_FRAME_PYTHON | ((code >> 4) << 20 & ~FR_FRAME_PYTHON) |
	       (line > FR_FRAME_PYTHON_LINE_MAX ? 0 : line);
}

static inline uint64_t fr_frame_python_code(uint64_t addr)
{
	return (addr & ~FR_FRAME_PYTHON) >> 20 << 4;
}

static inline uint32_t fr_frame_python_line(uint64_t addr)
{
	return (uint32_t)(addr & FR_FRAME_PYTHON_LINE_MAX);
}

/* The name of a marker frame's "address" as readers print it, or NULL
 * when @addr is no marker this reader knows (0 and the numbers not yet
 * given a meaning among them).  For user frames only: kernel addresses
 * are never this low anyway. */
static inline const char *fr_frame_marker_name(uint64_t addr)
{
	switch (addr) {
	case FR_FRAME_TRUNCATED: return "[truncated]";
	case FR_FRAME_NO_UNWIND_INFO: return "[no unwind info]";
	case FR_FRAME_UNWIND_FAILED: return "[unwind failed]";
	case FR_FRAME_NOT_CAPTURED: return "[user stack not captured]";
	}
	return NULL;
}

/* Where a frame's function is looked up: the interrupted instruction
 * (@leaf) at itself, a return address one byte back, since a call that
 * ends its function returns to the next one.  Markers (and 0) are no
 * return addresses: they stay as they are. */
static inline uint64_t fr_frame_lookup_addr(uint64_t addr, int leaf)
{
	return leaf || addr < FR_FRAME_MARKER_MAX ? addr : addr - 1;
}

/* Does a record of @type carry a stack (r->stack)? */
static inline int fr_record_type_has_stack(uint16_t type)
{
	return (fr_record_type_flags(type) & FR_RT_STACK) != 0;
}

/* Is a record of @type a description (FR_RT_DESCRIPTION)? */
static inline int fr_record_type_is_description(uint16_t type)
{
	return (fr_record_type_flags(type) & FR_RT_DESCRIPTION) != 0;
}

/* What description @r describes within its pid: a cgroup id, a code
 * address; 0 for a record that is no description. */
static inline uint64_t fr_record_described_id(const struct fr_record *r)
{
	switch ((enum fr_record_type)r->type) {
	case FR_REC_CGROUP: return r->cgroup_id;
	case FR_REC_MAPPING: return r->mapping.start;
	case FR_REC_SYMBOL: return r->symbol.start;
	case FR_REC_INLINE: return r->inl.addr;
	case FR_REC_PYCODE: return r->pycode.code;
	case FR_REC_PROCESS:
	FR_RECORD_TYPES_PRINTED(FR_REC_LABEL_)
		break;
	}
	return 0;
}

/* The process whose address space a record's user frames are in: a
 * signal's are the sender's (the faulting thread's own for a fault). */
static inline uint32_t fr_record_stack_pid(const struct fr_record *r)
{
	return r->type == FR_REC_SIGNAL ? r->signal.sender_pid : r->pid;
}

/* The waker of offcpu record @r (r->sched.waker.context set) as a record
 * of its own, into @out: pid, tid and comm the waker's, ts the wakeup's,
 * its stack as out's stack (a type with one: fr_record_frames() and the
 * symbol tables read it in the waker's process), cgroup unknown. */
void fr_record_waker_view(const struct fr_record *r, struct fr_record *out);

/* The frames of a decoded sample, offcpu or signal record, kernel then user, each
 * leaf first, into @out (room for @max); returns how many (0 for a record
 * of another type), or -EBADMSG. */
int fr_record_frames(const struct fr_record *r, uint64_t *out, size_t max);

/* Upper bound of one encoded record, to size buffers. */
size_t fr_record_max_encoded_size(const struct fr_record *r);

/* Appends @r to @buf (capacity @cap, @len bytes used); returns the new
 * length, or -ENOBUFS when it does not fit (nothing written). */
int fr_record_encode(struct fr_codec_state *st, const struct fr_record *r, uint8_t *buf,
		     size_t cap, size_t len);

/* The streams of a chunk in the column layout (FR_CHUNK_INCOMPAT_STREAMS):
 * each field of a record goes into the stream of its kind (timestamps
 * with timestamps, pids with pids, ...), bytes as a row would have them.
 * Like values next to each other compress far better: full-mode switch
 * records take 1.3 bytes on disk instead of 2.1 (BENCHMARKS.md). */
#define FR_REC_STREAMS 14

struct fr_byte_sink {
	uint8_t *buf;
	size_t cap, len;
};

/* Stream i is buf[i], len[i] of cap[i] bytes used. */
struct fr_record_streams {
	uint8_t *buf[FR_REC_STREAMS];
	size_t len[FR_REC_STREAMS];
	size_t cap[FR_REC_STREAMS];
};

/* A chunk's content in columns: a table of the streams' lengths (u32,
 * little-endian), then the streams one after the other. */
#define FR_REC_STREAM_TABLE (4 * FR_REC_STREAMS)

/* A stream's name, for statistics (frctl dump --sizes): "ts", "frames", ... */
const char *fr_record_stream_name(unsigned stream);

/* Writes the table of @s's stream lengths to @table. */
void fr_record_streams_table(const struct fr_record_streams *s, uint8_t table[FR_REC_STREAM_TABLE]);

/* Appends @r's fields to their streams; returns the bytes added, or
 * -ENOBUFS when a stream is full or they would be more than @room
 * (nothing written). */
int fr_record_encode_streams(struct fr_codec_state *st, const struct fr_record *r,
			     struct fr_record_streams *out, size_t room);

/* Appends the switch records of @n BPF switch events @e, as
 * fr_record_encode_streams() would append the records the daemon makes of
 * them one by one (type FR_REC_SWITCH, no flags), byte for byte: the
 * batch path of full mode, with no struct fr_record per switch.  Returns
 * the bytes added, or -ENOBUFS when they do not all fit (nothing
 * written). */
struct fr_event_switch; /* bpf/event.h */
int fr_record_encode_switch_events(struct fr_codec_state *st, const struct fr_event_switch *e, size_t n,
				   struct fr_record_streams *out, size_t room);

/* Where a stream is read: its next byte, and its end. */
struct fr_byte_cursor {
	const uint8_t *p, *end;
};

/* Reads the records of a chunk's content one after the other, from rows
 * or from columns.  From columns, each record is written as a row into
 * the rows buffer as it is read, and what the decoded record points to
 * is there: once all are read, the buffer holds what a chunk of rows
 * would, for reading single records again by their offset. */
struct fr_record_iter {
	struct fr_codec_state st;
	struct fr_byte_cursor cur[FR_REC_STREAMS]; /* rows: cur[0] only */
	struct fr_byte_sink rows; /* columns are written here as rows; rows
				     are read from here (cur[0]) */
	bool columns;
	bool failed; /* a record did not decode: no more are read */
};

/* @content (@content_len bytes) is a chunk's decompressed payload; with
 * FR_CHUNK_INCOMPAT_STREAMS in @incompat_flags it is columns that become
 * rows in @rows (@rows_len bytes, the chunk's raw_size), else it is the
 * rows themselves (@rows == @content).  Columns with @rows NULL are not
 * written out as rows: the records read point into @content, and their
 * row positions are 0.  -EBADMSG when the stream table does not add up. */
int fr_record_iter_init(struct fr_record_iter *it, uint32_t incompat_flags, const uint8_t *content,
			size_t content_len, uint8_t *rows, size_t rows_len);
/* The next record into *out, and where its row starts in the rows;
 * -EBADMSG for malformed input (*out is then scratch). */
int fr_record_iter_next(struct fr_record_iter *it, struct fr_record *out, size_t *row_pos);
/* The same for up to @n records, into the records @stride bytes apart
 * from @out (a record may be a member of a bigger struct), and row_pos[0..n);
 * returns how many decoded: fewer than @n at one that does not (which is
 * then scratch), after which none are.  Faster than one at a time: the
 * cursors of the streams are loaded and stored once. */
size_t fr_record_iter_read(struct fr_record_iter *it, void *out, size_t stride, size_t *row_pos, size_t n);
/* True when every record read decoded, and every byte of the content was
 * read, no more. */
bool fr_record_iter_done(const struct fr_record_iter *it);

/* Decodes one record at *pos in buf[0..len) into *out; advances *pos.
 * Returns 0; 1 for a record of a type this reader does not know, in a
 * chunk with FR_CHUNK_INCOMPAT_RECORD_EXT (skipped: *pos is past it, *out
 * is scratch, st->unknown counts it); or -EBADMSG for malformed input
 * (never reads outside the buffer; *out is then scratch). */
int fr_record_decode(struct fr_codec_state *st, const uint8_t *buf, size_t len, size_t *pos,
		     struct fr_record *r);

#endif
