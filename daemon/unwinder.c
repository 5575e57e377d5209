/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../bpf/event.h"
#include "../lib/clock.h"
#include "../lib/elf-eh-frame.h"
#include "../lib/elf-inflated.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "../lib/range-find.h"
#include "../lib/record.h"
#include "mapped-file.h"
#include "proc-access.h"
#include "unwinder.h"

/* Processes held, each with its Dwfl: the modules it maps and the unwind
 * table entries looked up so far, which libdw keeps per process: ~100
 * KiB for a small program (5 MiB for a clang process, before
 * lib/elf-eh-frame.c gave libdw its libraries' search tables).  Processes that
 * exited go a second after their exit record (samples taken before it
 * may still be in another CPU's ring); then the least recently used; and
 * all but the most recent quarter when the helper's heap passes its
 * bound (fr_unwinder_shed(), flightrec-parse.c). */
#define PROCS_MAX 64
#define EXITED_KEEP_NS 1000000000ULL
/* A process whose stack reaches code outside every module it had (a
 * library loaded since) has its mappings read again, at most this often. */
#define REREAD_NS 1000000000ULL
#define REREAD_FIRST_NS 10000000ULL
/* Mapped files held open, shared by every process that maps them: each
 * is one read-only mapping of the file (page cache, no descriptor), so
 * libc is opened once, not once per process. */
#define FILES_MAX 256
/* A file whose compressed sections inflate past these is not given to
 * libdwfl: it would decompress its .debug_* sections into the heap when
 * .eh_frame misses an address (lib/elf-inflated.h).  Its frames are
 * walked by frame pointers.  Distribution binaries have none; a -g -gz
 * build of a large program a few MiB. */
#define INFLATE_MAX (16u << 20)
static const struct fr_elf_inflate_limits inflate_limits = {
	.section_max = INFLATE_MAX,
	.total_max = INFLATE_MAX,
};

struct ufile {
	dev_t dev;
	ino_t ino;
	Elf *elf;      /* our reference; each module that uses it holds one */
	uint64_t used;
};

/* A Dwfl and the processes that use it: a forked child unwinds with its
 * parent's until it maps something else (fork-heavy workloads' children
 * often exit before their own maps can be read). */
/* A file mapping of a process, from its /proc/PID/maps: where
 * /proc/PID/map_files names it, and which file it is. */
struct vma {
	uint64_t start, end;
	dev_t dev;
	uint64_t ino;
};

struct dwfl_box {
	Dwfl *dwfl;
	unsigned refs;
	/* the file mappings it was reported from, by start: its modules are
	 * opened later, as frames reach them, maybe once the process that
	 * read them is gone, or by a forked child that is gone */
	struct vma *vmas;
	size_t nvmas;
};

struct uproc {
	uint32_t pid;
	uint64_t exe_ino; /* of /proc/PID/exe when the maps were read */
	struct dwfl_box *box; /* NULL: the process was gone when first sampled */
	uint64_t read_at;
	uint64_t used;
	uint64_t exited_at; /* CLOCK_MONOTONIC of its exit record, 0: alive */
	bool inherited;     /* the box is its parent's, from the fork */
	bool tried;         /* its maps were read, or tried */
	uint8_t rereads_early; /* read again sooner than REREAD_NS (reread_due()) */
	uint32_t ppid;      /* the parent that forked it, if seen (0: not) */
};

struct fr_unwinder {
	Dwfl_Callbacks callbacks;
	struct fr_pid_map procs;
	struct ufile *files;
	size_t nfiles;
	uint64_t clock;
	struct uproc *reporting; /* the process whose modules are being opened */
	struct vma *vmas;        /* its file mappings, by start (reporting only) */
	size_t nvmas, vmacap;
	char *raw;               /* its /proc/PID/maps as read */
	size_t rawcap;
	char *maps;              /* the lines of raw libdwfl is given */
	size_t mapscap;
	/* whose maps u->raw holds, read during the last fr_unwinder_unwind()
	 * (0: none), and its image (fr_unwinder_maps_read()) */
	uint32_t maps_pid;
	uint64_t maps_exe_ino;
	/* the stack being unwound */
	const struct fr_ustack *cur;
	bool read_past; /* a read beyond the copy was asked for */
	uint64_t *out;
	size_t nout, max;
	struct fr_unwinder_stats st;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	return 0; /* threads are named by the sample, through get_thread */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	*thread_arg = arg;
	return true;
}

/* Reads of the stack come from the copy: the process may be gone. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct fr_unwinder *u = arg;
	const struct fr_ustack *s = u->cur;
	uint64_t sp = s->regs[7];

	if (addr < sp || addr - sp > s->stack_len || s->stack_len - (addr - sp) < sizeof(*result)) {
		u->read_past = true;
		return false;
	}
	memcpy(result, s->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct fr_ustack *s = ((struct fr_unwinder *)arg)->cur;
	Dwarf_Word regs[FR_UREGS];

	for (unsigned i = 0; i < FR_UREGS; i++)
		regs[i] = s->regs[i];
	return dwfl_thread_state_registers(thread, 0, FR_UREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* libdwfl's find_elf gets no argument of ours: the process whose module
 * is opened is the one being reported or unwound (one at a time: the
 * daemon has one thread). */
static struct fr_unwinder *current;

static int cmp_vma(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Opens module @name of the current process (fr_open_mapped_file()); one Elf per
 * file for every process (see FILES_MAX).
 * Returns -1 with *elfp set, or -1 with *elfp NULL (no file: the module
 * has no unwind tables, its frames are walked by frame pointers). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
		    Elf **elfp)
{
	struct fr_unwinder *u = current;
	struct uproc *p = u ? u->reporting : NULL;
	Dwarf_Addr start = 0;
	struct ufile *f, *victim = NULL;
	struct vma key, *v;
	struct stat st;
	int fd;

	*elfp = NULL;
	if (!p || !p->box || name[0] != '/')
		return -1; /* [vdso] and the like: libdwfl reads them itself */
	(void)dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	key = (struct vma){ .start = start };
	v = bsearch(&key, p->box->vmas, p->box->nvmas, sizeof(key), cmp_vma);
	fd = v ? fr_access_mapped(p->pid, v->start, v->end, name, v->dev, v->ino) : -ENOENT;
	if (fd == -ESTALE)
		u->st.files_refused++;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t i = 0; i < u->nfiles; i++) {
		f = &u->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino) {
			close(fd);
			f->used = u->clock;
			*elfp = elf_begin(-1, ELF_C_READ_MMAP, f->elf); /* one more reference */
			return -1;
		}
		if (!victim || f->used < victim->used)
			victim = f;
	}
	if (u->nfiles < FILES_MAX) {
		victim = &u->files[u->nfiles++];
		*victim = (struct ufile){};
	} else {
		elf_end(victim->elf); /* modules holding it keep it */
		u->st.files_evicted++;
	}
	*victim = (struct ufile){ .dev = st.st_dev, .ino = st.st_ino, .used = u->clock };
	victim->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* the whole file is mapped: the descriptor is not needed any more */
	if (victim->elf && (elf_kind(victim->elf) != ELF_K_ELF || elf_cntl(victim->elf, ELF_C_FDDONE) != 0)) {
		elf_end(victim->elf);
		victim->elf = NULL;
	}
	if (victim->elf && fr_elf_inflated_check(victim->elf, &inflate_limits, NULL) < 0) {
		elf_end(victim->elf);
		victim->elf = NULL;
		u->st.files_too_big++;
	}
	/* its unwind table searched, not parsed up to each address
	 * (lld-linked libraries; lib/elf-eh-frame.h) */
	if (victim->elf && fr_elf_eh_frame_by_table(victim->elf) > 0)
		u->st.files_eh_by_table++;
	close(fd);
	if (!victim->elf) {
		*victim = u->files[--u->nfiles];
		return -1;
	}
	*elfp = elf_begin(-1, ELF_C_READ_MMAP, victim->elf);
	return -1;
}

/* No separate debug files: their .debug_frame is needed only where
 * .eh_frame is missing, which the x86-64 ABI requires, and reading them
 * (decompressed, per process) cost hundreds of MiB on a build machine. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	return -1;
}

int fr_unwinder_new(struct fr_unwinder **ret)
{
	struct fr_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->files = calloc(FILES_MAX, sizeof(*u->files));
	if (!u->files) {
		free(u);
		return -ENOMEM;
	}
	u->callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf,
		.find_debuginfo = find_debuginfo,
		/* called for relocatable files (a mapped .o): must not be NULL */
		.section_address = dwfl_offline_section_address,
	};
	*ret = u;
	return 0;
}

static void box_unref(struct dwfl_box *b)
{
	if (b && --b->refs == 0) {
		dwfl_end(b->dwfl);
		free(b->vmas);
		free(b);
	}
}

static void uproc_free(struct uproc *p)
{
	if (!p)
		return;
	box_unref(p->box);
	free(p);
}

struct fr_unwinder *fr_unwinder_free(struct fr_unwinder *u)
{
	struct uproc *p;
	size_t i = 0;

	if (!u)
		return NULL;
	while ((p = fr_pid_map_next(&u->procs, &i, NULL)))
		uproc_free(p);
	fr_pid_map_done(&u->procs);
	for (size_t k = 0; k < u->nfiles; k++)
		elf_end(u->files[k].elf);
	free(u->files);
	free(u->vmas);
	free(u->maps);
	free(u->raw);
	free(u);
	return NULL;
}

/* Reads the maps in @fd into u->maps (for libdwfl) and its file
 * mappings into u->vmas (for find_elf); -ESRCH when there are none. */
static int read_maps_fd(struct fr_unwinder *u, int fd_, bool *cut)
{
	_cleanup_close_ int fd = fd_;
	size_t len = 0, kept = 0;
	ssize_t n;

	u->maps_pid = 0; /* u->raw is written over */
	if (fd < 0)
		return fd;
	for (;;) {
		if (len + 4096 + 1 > u->rawcap) {
			size_t c = MAX(u->rawcap * 2, (size_t)65536);
			char *q = realloc(u->raw, c);
			if (!q)
				return -ENOMEM;
			u->raw = q;
			u->rawcap = c;
		}
		n = read(fd, u->raw + len, u->rawcap - len - 1);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* cut: the process exited while it was read */
	if (cut)
		*cut = len && !fr_maps_fd_whole(fd);
	u->raw[len] = 0;
	if (len + 1 > u->mapscap) {
		char *q = realloc(u->maps, len + 1);
		if (!q)
			return -ENOMEM;
		u->maps = q;
		u->mapscap = len + 1;
	}
	/* libdwfl is given the mappings of files (and [vdso]) only, at most
	 * FR_MAPS_FILES_MAX of them: it makes a module of each file, and
	 * anonymous mappings are no module's */
	{
		char *out = u->maps;
		for (const char *l = u->raw; *l;) {
			const char *nl = strchr(l, '\n');
			size_t ll = nl ? (size_t)(nl + 1 - l) : strlen(l);
			int path_at = 0;

			if (sscanf(l, "%*x-%*x %*s %*s %*x:%*x %*u %n", &path_at) >= 0 && path_at &&
			    (l[path_at] == '/' || l[path_at] == '[')) {
				if (kept == FR_MAPS_FILES_MAX) {
					u->st.maps_capped++;
					break;
				}
				memcpy(out, l, ll);
				out += ll;
				kept++;
			}
			l += ll;
		}
		*out = 0;
		len = (size_t)(out - u->maps);
	}
	if (len == 0) /* a zombie, or exited as it was read: its memory is gone */
		return -ESRCH;
	u->nvmas = 0;
	for (const char *l = u->maps; *l;) {
		const char *nl = strchr(l, '\n');
		unsigned long long lo, hi, ino;
		unsigned maj, min;
		int path_at = 0;

		if (sscanf(l, "%llx-%llx %*s %*s %x:%x %llu %n", &lo, &hi, &maj, &min, &ino, &path_at) == 5 && path_at &&
		    l[path_at] == '/') {
			if (u->nvmas == u->vmacap) {
				size_t c = MAX(u->vmacap * 2, (size_t)64);
				struct vma *q = realloc(u->vmas, c * sizeof(*q));
				if (!q)
					return -ENOMEM;
				u->vmas = q;
				u->vmacap = c;
			}
			u->vmas[u->nvmas++] = (struct vma){ lo, hi, makedev(maj, min), ino };
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	/* /proc/PID/maps is sorted by address already */
	return 0;
}

/* Reads /proc/@pid/maps (read_maps_fd()); if it read empty or cut, the
 * process exited meanwhile: what it mapped, as the daemon learned it. */
static int read_maps(struct fr_unwinder *u, uint32_t pid, uint64_t *exe_ino)
{
	int fd = fr_access_maps(pid, exe_ino), k;
	bool cut = false;

	if (fd < 0)
		return fd;
	k = read_maps_fd(u, fd, &cut);
	if (k == -ESRCH)
		k = read_maps_fd(u, fr_access_maps_gone(pid, exe_ino), NULL);
	else if (k == 0 && cut) {
		/* else what was read is better than nothing */
		int gfd = fr_access_maps_gone(pid, exe_ino);
		if (gfd >= 0)
			k = read_maps_fd(u, gfd, NULL);
	}
	return k;
}

/* Reads @p's mappings into a new Dwfl; false if the process is gone. */
static bool report_maps(struct fr_unwinder *u, struct uproc *p)
{
	uint64_t exe_ino;
	FILE *f = NULL;
	bool ok = false;

	p->read_at = fr_now_ns(CLOCK_MONOTONIC);
	u->st.maps_read++;
	/* gone: what it had (its own, or its parent's) still unwinds */
	if (read_maps(u, p->pid, &exe_ino) < 0)
		return false;
	u->maps_pid = p->pid;
	u->maps_exe_ino = exe_ino;
	/* a new Dwfl, never the old one reported again: a parent's is this
	 * one's own now, and libdwfl's attached state keeps the machine
	 * backend of the module it was attached with, which a report without
	 * that module (an exec of the same image) frees under it (a use after
	 * free: an assertion in libdwfl's state_alloc aborted the daemon) */
	box_unref(p->box);
	p->inherited = false;
	p->box = calloc(1, sizeof(*p->box));
	if (!p->box)
		return false;
	p->box->refs = 1;
	p->box->dwfl = dwfl_begin(&u->callbacks);
	if (!p->box->dwfl)
		goto out;
	p->box->vmas = u->nvmas ? malloc(u->nvmas * sizeof(*u->vmas)) : NULL;
	p->box->nvmas = p->box->vmas ? u->nvmas : 0;
	if (p->box->vmas)
		memcpy(p->box->vmas, u->vmas, u->nvmas * sizeof(*u->vmas));
	p->exe_ino = exe_ino;
	dwfl_report_begin(p->box->dwfl);
	f = fmemopen(u->maps, strlen(u->maps), "r");
	if (!f || dwfl_linux_proc_maps_report(p->box->dwfl, f) != 0 || dwfl_report_end(p->box->dwfl, NULL, NULL) != 0)
		goto out;
	/* module files are opened as frames reach them: most processes run
	 * code from a few of the files they map (opening all of perf's 40
	 * libraries for each `perf bench` process doubled the daemon's RSS) */
	current = u;
	u->reporting = p; /* attaching opens a module to learn the machine */
	ok = dwfl_attach_state(p->box->dwfl, NULL, (pid_t)p->pid, &thread_callbacks, u);
	u->reporting = NULL;
	current = NULL;
out:
	if (f)
		fclose(f);
	if (!ok) {
		box_unref(p->box);
		p->box = NULL;
	}
	return ok;
}

/* May @p's maps be read again, a frame being outside them?  Once a
 * second (code generated at run time would have them read at every
 * stack), and twice sooner, as the symbolizer does (REREAD_FIRST_NS
 * there): maps read while the loader was still mapping the libraries
 * lack them, and a process that opens a library and exits at once
 * (python3 importing ctypes, then crashing in it) has no second chance. */
static bool reread_due(struct uproc *p)
{
	uint64_t since = fr_now_ns(CLOCK_MONOTONIC) - p->read_at;

	if (since >= REREAD_NS)
		return true;
	if (p->rereads_early == 0 || (p->rereads_early == 1 && since >= REREAD_FIRST_NS)) {
		p->rereads_early++;
		return true;
	}
	return false;
}

static struct uproc *uproc_get(struct fr_unwinder *u, uint32_t pid, uint32_t ppid, uint64_t exe_ino)
{
	struct uproc *p = fr_pid_map_get(&u->procs, pid);

	if (p && exe_ino && p->exe_ino != exe_ino &&
	    (p->inherited || fr_now_ns(CLOCK_MONOTONIC) - p->read_at >= REREAD_NS)) {
		/* an exec not seen yet: start over */
		fr_pid_map_remove(&u->procs, pid);
		uproc_free(p);
		p = NULL;
	}
	if (p && p->tried)
		return p;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || fr_pid_map_put(&u->procs, pid, p, NULL) < 0) {
			free(p);
			return NULL;
		}
		p->pid = pid;
	}
	if (!p->ppid)
		p->ppid = ppid;
	/* a process already gone keeps an entry without a Dwfl: its other
	 * samples are not tried again one by one */
	p->tried = true;
	/* the child of a process known to run the same image: forked without
	 * exec (its fork record may still wait in another CPU's ring), so its
	 * mappings are its parent's.  Reading them instead was the daemon's
	 * largest cost under workloads that fork hundreds of processes (perf
	 * bench sched messaging).  An exec of the same binary maps it
	 * elsewhere: the first frame outside the parent's modules has them
	 * read (read_at 0: at once).  A parent not known yet is read once
	 * for all its children. */
	if (p->ppid && p->ppid != pid && exe_ino) {
		struct uproc *pp = fr_pid_map_get(&u->procs, p->ppid);

		if (!pp)
			pp = uproc_get(u, p->ppid, 0, exe_ino);

		if (pp && pp->box && pp->exe_ino == exe_ino) {
			p->box = pp->box;
			p->box->refs++;
			p->exe_ino = exe_ino;
			p->inherited = true;
			p->read_at = 0;
			u->st.inherited++;
			return p;
		}
	}
	if (!report_maps(u, p) && p->ppid && p->ppid != pid) {
		/* gone already, but forked by a process that may still be
		 * there: its mappings were this one's, if it runs the same
		 * image (what the parent is known by may be from before an
		 * exec whose record is still in another CPU's ring: then
		 * the image differs and its maps are read again) */
		struct uproc *pp = uproc_get(u, p->ppid, 0, exe_ino);

		if (pp && pp->box && (!exe_ino || pp->exe_ino == exe_ino)) {
			p->box = pp->box;
			p->box->refs++;
			p->exe_ino = pp->exe_ino;
			p->inherited = true;
			u->st.inherited++;
		}
	}
	return p;
}

/* What libdwfl parses next is the unwind table of the file mapped at
 * @pc: say so (proc-access.h). */
static void parsing_at(const struct uproc *p, uint64_t pc)
{
	const struct vma *v = fr_span_find(p->box->vmas, p->box->nvmas, sizeof(struct vma), pc);

	_Static_assert(offsetof(struct vma, start) == offsetof(struct fr_span, start) &&
			       offsetof(struct vma, end) == offsetof(struct fr_span, end),
		       "a vma starts as a span");
	if (v)
		fr_access_parsing(v->dev, v->ino);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct fr_unwinder *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (pc < FR_FRAME_MARKER_MAX) /* not code: the chain ended */
		return DWARF_CB_ABORT;
	if (u->nout + 1 >= u->max) { /* one place kept for the marker */
		u->read_past = true;
		return DWARF_CB_ABORT;
	}
	u->out[u->nout++] = pc;
	parsing_at(u->reporting, pc);
	return DWARF_CB_OK;
}

/* Unwinds with @p's Dwfl; true if it reached the outermost frame. */
static bool walk(struct fr_unwinder *u, struct uproc *p)
{
	int r;

	u->nout = 0;
	u->read_past = false;
	current = u;
	u->reporting = p;
	parsing_at(p, u->cur->regs[16]);
	r = dwfl_getthread_frames(p->box->dwfl, (pid_t)u->cur->tid, on_frame, u);
	u->reporting = NULL;
	current = NULL;
	/* 0: the outermost frame said there is no caller (x86-64's _start
	 * marks its return address undefined); -1 or an abort: stopped */
	return r == 0 && !u->read_past;
}

size_t fr_unwinder_unwind(struct fr_unwinder *u, const struct fr_ustack *s, uint64_t *out, size_t max)
{
	struct uproc *p;
	bool done;

	u->maps_pid = 0;
	if (max < 2 || !s->regs[7] || !s->regs[16])
		return 0;
	u->st.stacks++;
	p = uproc_get(u, s->pid, s->ppid, s->exe_ino);
	if (p)
		p->used = ++u->clock;
	if (!p || !p->box || (s->exe_ino && p->exe_ino != s->exe_ino)) {
		/* gone before its maps were read, or sampled in another image */
		out[0] = s->regs[16];
		out[1] = FR_FRAME_UNWIND_FAILED;
		u->st.failed++;
		return 2;
	}
	u->cur = s;
	u->out = out;
	u->max = max;
	done = walk(u, p);
	/* stopped in code outside every module known (having gone on by
	 * frame pointers, maybe off the copy): a library loaded since the
	 * maps were read?  Or, with its parent's mappings, an exec of the
	 * same binary (whose record is still in another CPU's ring), which
	 * mapped it elsewhere. */
	if (!done && u->nout && (p->inherited || !dwfl_addrmodule(p->box->dwfl, out[u->nout - 1])) &&
	    reread_due(p) && report_maps(u, p))
		done = walk(u, p);
	u->cur = NULL;
	if (u->nout == 0) {
		out[u->nout++] = s->regs[16];
		done = false;
	}
	u->st.frames += u->nout;
	if (done) {
		u->st.complete++;
		return u->nout;
	}
	if (u->read_past) {
		out[u->nout++] = FR_FRAME_TRUNCATED;
		u->st.truncated++;
	} else {
		out[u->nout++] = FR_FRAME_NO_UNWIND_INFO;
		u->st.no_info++;
	}
	return u->nout;
}

const char *fr_unwinder_maps_read(const struct fr_unwinder *u, uint32_t pid, uint64_t *exe_ino)
{
	if (!pid || u->maps_pid != pid)
		return NULL;
	*exe_ino = u->maps_exe_ino;
	return u->raw;
}

void fr_unwinder_forget(struct fr_unwinder *u, uint32_t pid)
{
	uproc_free(fr_pid_map_remove(&u->procs, pid));
}

void fr_unwinder_fork(struct fr_unwinder *u, uint32_t parent, uint32_t child)
{
	const struct uproc *pp = fr_pid_map_get(&u->procs, parent);
	struct uproc *c;

	fr_unwinder_forget(u, child); /* a reused pid */
	if (parent == child)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	/* with the parent's mappings if they are known; else they are read
	 * at the child's first sample, or the parent's then if it is gone */
	*c = (struct uproc){ .pid = child, .ppid = parent };
	if (pp && pp->box)
		*c = (struct uproc){ .pid = child, .ppid = parent, .exe_ino = pp->exe_ino, .box = pp->box,
				     .read_at = pp->read_at, .used = pp->used, .inherited = true, .tried = true };
	if (fr_pid_map_put(&u->procs, child, c, NULL) < 0) {
		free(c);
		return;
	}
	if (c->box) {
		c->box->refs++;
		u->st.inherited++;
	}
}

void fr_unwinder_exited(struct fr_unwinder *u, uint32_t pid)
{
	struct uproc *p = fr_pid_map_get(&u->procs, pid);

	if (p)
		p->exited_at = fr_now_ns(CLOCK_MONOTONIC);
}

/* Frees the processes for which @drop says so. */
static void drop_where(struct fr_unwinder *u, bool (*drop)(const struct uproc *p, uint64_t arg), uint64_t arg)
{
	_cleanup_free_ uint32_t *victims = malloc(u->procs.n * sizeof(*victims));
	size_t i = 0, nv = 0;
	struct uproc *p;
	uint32_t pid;

	if (!victims)
		return;
	while ((p = fr_pid_map_next(&u->procs, &i, &pid)))
		if (drop(p, arg))
			victims[nv++] = pid;
	for (i = 0; i < nv; i++)
		fr_unwinder_forget(u, victims[i]);
	u->st.evicted += nv;
}

static bool exited_before(const struct uproc *p, uint64_t t)
{
	return p->exited_at && p->exited_at < t;
}

static bool used_before(const struct uproc *p, uint64_t t)
{
	return p->used < t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Keeps the @keep most recently used processes. */
static void keep_recent(struct fr_unwinder *u, size_t keep)
{
	_cleanup_free_ uint64_t *used = malloc(u->procs.n * sizeof(*used));
	size_t i = 0, n = 0;
	struct uproc *p;

	if (!used || u->procs.n <= keep)
		return;
	while ((p = fr_pid_map_next(&u->procs, &i, NULL)))
		used[n++] = p->used;
	qsort(used, n, sizeof(*used), cmp_u64);
	drop_where(u, used_before, used[n - keep]);
}

bool fr_unwinder_has(const struct fr_unwinder *u, uint32_t pid)
{
	return fr_pid_map_get(&u->procs, pid) != NULL;
}

void fr_unwinder_shed(struct fr_unwinder *u)
{
	u->st.heap_trims++;
	if (u->procs.n > 4)
		keep_recent(u, u->procs.n / 4);
}

void fr_unwinder_trim(struct fr_unwinder *u)
{
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);

	if (now > EXITED_KEEP_NS)
		drop_where(u, exited_before, now - EXITED_KEEP_NS);
	if (u->procs.n > PROCS_MAX)
		keep_recent(u, PROCS_MAX * 3 / 4);
}

void fr_unwinder_get_stats(const struct fr_unwinder *u, struct fr_unwinder_stats *ret)
{
	*ret = u->st;
	ret->processes = u->procs.n;
	ret->files = u->nfiles;
}
