/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel symbol tables (kallsyms text, snapshots) and frame resolution
 * against a chunk's mapping, symbol and inline records: sizes bounded by
 * the next symbol of any kind, return addresses looked up one byte back,
 * module offsets, kernel modules, frames that cannot be named, functions
 * inlined at a frame, and the markers that end a user stack. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksyms.h"
#include "symtab.h"
#include "test.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81001000 t do_syscall_64_alias\n"
	"ffffffff81001200 T __x64_sys_getppid\n"
	"ffffffff81001300 D some_data\n"
	"ffffffff81f00000 T _einittext\n"
	"ffffffff83000000 d init_data\n"
	"ffffffffc0001000 t ext4_read\t[ext4]\n"
	"ffffffffc0001400 t ext4_write\t[ext4]\n"
	"0000000000000000 A fixed_percpu_data\n"
	"garbage line\n";

static void test_ksyms(void)
{
	struct fr_ksyms *k = NULL;
	const struct fr_ksym *s;
	char tmpl[] = "/tmp/fr-test-ksyms-XXXXXX";
	char *dir;
	int dfd;

	CHECK_EQ(fr_ksyms_parse(strdup(kallsyms), sizeof(kallsyms) - 1, &k), 0);
	CHECK_EQ(fr_ksyms_count(k), 7);
	s = fr_ksyms_lookup(k, 0xffffffff81001234ULL);
	CHECK(s && strcmp(s->name, "__x64_sys_getppid") == 0 && s->size == 0x100); /* data bounds it */
	s = fr_ksyms_lookup(k, 0xffffffff81001010ULL);
	CHECK(s && strncmp(s->name, "do_syscall_64", 13) == 0 && s->size == 0x200);
	CHECK(fr_ksyms_lookup(k, 0xffffffff81001300ULL) == NULL); /* data, not a function */
	s = fr_ksyms_lookup(k, 0xffffffffc0001404ULL);
	CHECK(s && strcmp(s->name, "ext4_write") == 0 && strcmp(s->module, "ext4") == 0);
	s = fr_ksyms_lookup(k, 0xffffffff81f00010ULL);
	CHECK(s && strcmp(s->name, "_einittext") == 0);
	CHECK(fr_ksyms_lookup(k, 0xffffffff82000010ULL) == NULL); /* sizes are capped */
	CHECK(fr_ksyms_lookup(k, 0x1000) == NULL);

	/* a snapshot round trip; a second save of the same boot is a no-op */
	dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(fr_ksyms_save(k, dfd, "0123456789abcdef0123456789abcdef"), 1);
	CHECK_EQ(fr_ksyms_save(k, dfd, "0123456789abcdef0123456789abcdef"), 0);
	CHECK(fr_ksyms_disk_usage(dfd) > 0);
	fr_ksyms_free(k);
	k = NULL;
	CHECK_EQ(fr_ksyms_load_snapshot(dfd, "0123456789abcdef0123456789abcdef", &k), 0);
	CHECK_EQ(fr_ksyms_count(k), 7);
	s = fr_ksyms_lookup(k, 0xffffffffc0001004ULL);
	CHECK(s && strcmp(s->name, "ext4_read") == 0 && strcmp(s->module, "ext4") == 0);
	CHECK_EQ(fr_ksyms_load_snapshot(dfd, "ffffffffffffffffffffffffffffffff", &(struct fr_ksyms *){ NULL }), -ENOENT);
	/* only the newest few boots are kept */
	for (int i = 0; i < FR_KSYMS_KEEP + 2; i++) {
		char id[40];
		snprintf(id, sizeof(id), "%032x", i + 1);
		CHECK_EQ(fr_ksyms_save(k, dfd, id), 1);
	}
	int n = 0;
	for (int i = 0; i < FR_KSYMS_KEEP + 2; i++) {
		char path[80];
		snprintf(path, sizeof(path), "kallsyms/%032x.zst", i + 1);
		n += faccessat(dfd, path, F_OK, 0) == 0;
	}
	CHECK_EQ(n, FR_KSYMS_KEEP);
	/* a boot whose successor saved its snapshot before the oldest
	 * segment began has no chunk left: its snapshot goes; the newest
	 * always stays */
	{
		char a[80], b[80];
		snprintf(a, sizeof(a), "kallsyms/%032x.zst", FR_KSYMS_KEEP + 2);
		snprintf(b, sizeof(b), "kallsyms/%032x.zst", FR_KSYMS_KEEP + 1);
		CHECK(utimensat(dfd, a, (struct timespec[]){ { 3000, 0 }, { 3000, 0 } }, 0) == 0);
		CHECK(utimensat(dfd, b, (struct timespec[]){ { 2000, 0 }, { 2000, 0 } }, 0) == 0);
		for (int i = 0; i < FR_KSYMS_KEEP; i++) {
			char path[80];
			snprintf(path, sizeof(path), "kallsyms/%032x.zst", i + 3);
			if (i + 3 <= FR_KSYMS_KEEP)
				CHECK(utimensat(dfd, path, (struct timespec[]){ { 1000 - i, 0 }, { 1000 - i, 0 } }, 0) == 0);
		}
		fr_ksyms_prune(dfd, 2500ULL * 1000000000ULL); /* between b and a */
		CHECK(faccessat(dfd, a, F_OK, 0) == 0);
		CHECK(faccessat(dfd, b, F_OK, 0) == 0); /* a saved after the oldest segment began */
		n = 0;
		for (int i = 0; i < FR_KSYMS_KEEP + 2; i++) {
			char path[80];
			snprintf(path, sizeof(path), "kallsyms/%032x.zst", i + 1);
			n += faccessat(dfd, path, F_OK, 0) == 0;
		}
		CHECK_EQ(n, 2);
		fr_ksyms_prune(dfd, 3500ULL * 1000000000ULL);
		CHECK(faccessat(dfd, a, F_OK, 0) == 0);
		CHECK(faccessat(dfd, b, F_OK, 0) != 0);
		fr_ksyms_prune(dfd, 0);
		CHECK(faccessat(dfd, a, F_OK, 0) == 0);
	}
	fr_ksyms_free(k);
	close(dfd);
	CHECK(system("rm -rf /tmp/fr-test-ksyms-*") == 0);

	/* all addresses zero: kptr_restrict */
	CHECK_EQ(fr_ksyms_parse(strdup("0000000000000000 T a\n0000000000000000 T b\n"), 42, &k), -ENODATA);
}

static struct fr_record sym(uint32_t pid, uint64_t start, uint64_t size, const char *name, const char *module)
{
	struct fr_record r = { .type = FR_REC_SYMBOL, .pid = pid };
	r.symbol.start = start;
	r.symbol.size = size;
	r.symbol.name = name;
	r.symbol.name_len = (uint32_t)strlen(name);
	r.symbol.module = module;
	r.symbol.module_len = (uint32_t)strlen(module);
	return r;
}

static void test_resolve(void)
{
	struct fr_symtab t = {};
	struct fr_record m = { .type = FR_REC_MAPPING, .pid = 7 }, sample = { .type = FR_REC_SAMPLE, .pid = 7 };
	struct fr_frame f;
	char buf[256];

	m.mapping.start = 0x555500001000ULL;
	m.mapping.end = 0x555500002000ULL;
	m.mapping.offset = 0x1000;
	m.mapping.vaddr = 0x1000;
	m.mapping.path = "/usr/bin/app";
	m.mapping.path_len = 12;
	CHECK_EQ(fr_symtab_add(&t, &m), 0);
	struct fr_record s1 = sym(7, 0x555500001100ULL, 0x80, "hot", ""),
			 s2 = sym(7, 0x555500001180ULL, 0x40, "next", ""),
			 s3 = sym(8, 0x555500001100ULL, 0x80, "other_pid", ""),
			 k1 = sym(0, 0xffffffff81001000ULL, 0x200, "do_syscall_64", ""),
			 k2 = sym(0, 0xffffffffc0001000ULL, 0x400, "ext4_read", "ext4");
	CHECK_EQ(fr_symtab_add(&t, &s2), 0);
	CHECK_EQ(fr_symtab_add(&t, &k2), 0);
	CHECK_EQ(fr_symtab_add(&t, &s1), 0);
	CHECK_EQ(fr_symtab_add(&t, &s3), 0);
	CHECK_EQ(fr_symtab_add(&t, &k1), 0);
	fr_symtab_finish(&t);

	sample.stack.kernel_frames = 2;
	/* kernel leaf */
	fr_symtab_resolve(&t, NULL, &sample, 0, 0xffffffff81001010ULL, &f);
	CHECK(f.kernel && f.sym && f.sym_off == 0x10 && strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "do_syscall_64+0x10") == 0);
	CHECK(strcmp(fr_frame_module(&f, buf, sizeof(buf)), "[kernel.kallsyms]") == 0);
	/* kernel module */
	fr_symtab_resolve(&t, NULL, &sample, 1, 0xffffffffc0001010ULL, &f);
	CHECK(strcmp(fr_frame_module(&f, buf, sizeof(buf)), "[ext4]") == 0);
	/* user leaf in a function */
	fr_symtab_resolve(&t, NULL, &sample, 2, 0x555500001104ULL, &f);
	CHECK(!f.kernel && strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "hot+0x4") == 0);
	CHECK(f.has_offset && f.offset == 0x1104 && strcmp(fr_frame_module(&f, buf, sizeof(buf)), "/usr/bin/app") == 0);
	/* a return address just past hot's end belongs to hot (call as the
	 * last instruction), but as the leaf it is next's first byte */
	sample.stack.kernel_frames = 0;
	fr_symtab_resolve(&t, NULL, &sample, 1, 0x555500001180ULL, &f);
	CHECK(strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "hot+0x80") == 0);
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x555500001180ULL, &f);
	CHECK(strcmp(fr_frame_name(&f, false, buf, sizeof(buf)), "next") == 0);
	/* in the mapping, no symbol: module and offset */
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x555500001f00ULL, &f);
	CHECK(!f.sym && strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "app+0x1f00") == 0);
	/* outside everything: still says it is unknown, with the address */
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x7f0000000000ULL, &f);
	CHECK(!f.sym && !f.module && strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "[unknown]@0x7f0000000000") == 0);
	/* another pid's symbols never apply */
	sample.pid = 9;
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x555500001104ULL, &f);
	CHECK(!f.sym);
	/* no table (a chunk without descriptions): kernel frames from a snapshot */
	struct fr_ksyms *k = NULL;
	CHECK_EQ(fr_ksyms_parse(strdup(kallsyms), sizeof(kallsyms) - 1, &k), 0);
	sample.stack.kernel_frames = 1;
	fr_symtab_resolve(NULL, k, &sample, 0, 0xffffffffc0001404ULL, &f);
	CHECK(f.sym && strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "ext4_write+0x4") == 0);
	CHECK(strcmp(fr_frame_module(&f, buf, sizeof(buf)), "[ext4]") == 0);
	fr_symtab_resolve(NULL, NULL, &sample, 0, 0xffffffff81001010ULL, &f);
	CHECK(!f.sym && strcmp(fr_frame_module(&f, buf, sizeof(buf)), "[kernel.kallsyms]") == 0);
	fr_ksyms_free(k);
	fr_symtab_done(&t);
}

/* Python frames: named by the pycode record of their pid and code object
 * exactly, with file and line, no module, no offset; unnamed without one;
 * kernel frames (bit 63 set too) never Python frames. */
static void test_python(void)
{
	struct fr_symtab t = {};
	struct fr_record c = { .type = FR_REC_PYCODE, .pid = 7 }, sample = { .type = FR_REC_SAMPLE, .pid = 7 };
	struct fr_frame f;
	char buf[256];

	c.pycode.code = 0x7f0000001230ULL;
	c.pycode.firstlineno = 40;
	c.pycode.name = "Handler.get";
	c.pycode.name_len = 11;
	c.pycode.file = "app/views.py";
	c.pycode.file_len = 12;
	CHECK_EQ(fr_symtab_add(&t, &c), 0);
	c.pycode.code = 0x7f0000001200ULL;
	c.pycode.name = "other";
	c.pycode.name_len = 5;
	CHECK_EQ(fr_symtab_add(&t, &c), 0);
	fr_symtab_finish(&t);
	sample.stack.kernel_frames = 1;
	fr_symtab_resolve(&t, NULL, &sample, 1, fr_frame_python(0x7f0000001230ULL, 42), &f);
	CHECK(f.python && !f.kernel && !f.module && f.line == 42 && !f.inlined);
	CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), "Handler.get (app/views.py:42)");
	fr_symtab_resolve(&t, NULL, &sample, 2, fr_frame_python(0x7f0000001230ULL, 0), &f);
	CHECK_STR(fr_frame_name(&f, false, buf, sizeof(buf)), "Handler.get (app/views.py)");
	/* another code object's address, another pid: not named */
	fr_symtab_resolve(&t, NULL, &sample, 2, fr_frame_python(0x7f0000001240ULL, 3), &f);
	CHECK(f.python && !f.sym);
	CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), "[python]@0x7f0000001240");
	sample.pid = 8;
	fr_symtab_resolve(&t, NULL, &sample, 2, fr_frame_python(0x7f0000001230ULL, 42), &f);
	CHECK(f.python && !f.sym);
	/* a kernel frame */
	fr_symtab_resolve(&t, NULL, &sample, 0, 0xffffffff81001010ULL, &f);
	CHECK(f.kernel && !f.python);
	fr_symtab_done(&t);
}

static struct fr_record inl(uint32_t pid, uint64_t addr, const char *names, uint32_t len)
{
	struct fr_record r = { .type = FR_REC_INLINE, .pid = pid };
	r.inl.addr = addr;
	r.inl.names = names;
	r.inl.names_len = len;
	return r;
}

/* The functions inlined at a frame: found by exact pid and lookup
 * address (a return address one byte back), innermost first, each a
 * frame of the real one's module and offset, named without an offset;
 * none for kernel frames, other pids or addresses, and at most as many
 * as there is room for. */
static void test_inline(void)
{
	static const char two[] = "inner\0middle", one[] = "only", empties[] = "\0a\0\0b\0";
	struct fr_symtab t = {};
	struct fr_record m = { .type = FR_REC_MAPPING, .pid = 7 }, sample = { .type = FR_REC_SAMPLE, .pid = 7 };
	struct fr_record s1 = sym(7, 0x555500001100ULL, 0x80, "outer", "");
	struct fr_record i1 = inl(7, 0x555500001110ULL, two, sizeof(two) - 1), i2 = inl(7, 0x555500001104ULL, one, 4),
			 i3 = inl(8, 0x555500001104ULL, two, sizeof(two) - 1),
			 i4 = inl(7, 0x555500001120ULL, empties, sizeof(empties) - 1),
			 ik = inl(0, 0xffffffff81001010ULL, one, 4);
	struct fr_frame f, out[4];
	char buf[256];

	m.mapping.start = 0x555500001000ULL;
	m.mapping.end = 0x555500002000ULL;
	m.mapping.offset = m.mapping.vaddr = 0x1000;
	m.mapping.path = "/usr/bin/app";
	m.mapping.path_len = 12;
	m.mapping.build_id = (const uint8_t *)"\x01\x02";
	m.mapping.build_id_len = 2;
	/* in no order: the table sorts */
	CHECK_EQ(fr_symtab_add(&t, &i3), 0);
	CHECK_EQ(fr_symtab_add(&t, &i1), 0);
	CHECK_EQ(fr_symtab_add(&t, &m), 0);
	CHECK_EQ(fr_symtab_add(&t, &ik), 0);
	CHECK_EQ(fr_symtab_add(&t, &s1), 0);
	CHECK_EQ(fr_symtab_add(&t, &i4), 0);
	CHECK_EQ(fr_symtab_add(&t, &i2), 0);
	fr_symtab_finish(&t);
	CHECK_EQ(t.ninls, 5);
	CHECK_EQ(t.nsyms, 1);
	CHECK_EQ(t.nmaps, 1);

	CHECK(fr_symtab_inline(&t, 7, 0x555500001104ULL) != NULL && fr_symtab_inline(&t, 7, 0x555500001104ULL)->inl.names == one);
	CHECK(fr_symtab_inline(&t, 8, 0x555500001104ULL) != NULL && fr_symtab_inline(&t, 8, 0x555500001104ULL)->inl.names == two);
	CHECK(fr_symtab_inline(&t, 7, 0x555500001105ULL) == NULL); /* exact only */
	CHECK(fr_symtab_inline(&t, 9, 0x555500001104ULL) == NULL);
	CHECK(fr_symtab_inline(NULL, 7, 0x555500001104ULL) == NULL);

	/* a return address: looked up one byte back, at i1 */
	fr_symtab_resolve(&t, NULL, &sample, 1, 0x555500001111ULL, &f);
	CHECK(!f.inlined && strcmp(fr_frame_name(&f, true, buf, sizeof(buf)), "outer+0x11") == 0);
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 1, &f, out, 4), 2);
	CHECK(out[0].inlined && out[1].inlined);
	CHECK(out[0].sym_len == 5 && memcmp(out[0].sym, "inner", 5) == 0);
	CHECK(out[1].sym_len == 6 && memcmp(out[1].sym, "middle", 6) == 0);
	CHECK_EQ(out[0].addr, 0x555500001111ULL);
	CHECK(out[0].has_offset && out[0].offset == 0x1111 && out[0].module == m.mapping.path && out[0].build_id_len == 2);
	CHECK_STR(fr_frame_name(&out[0], true, buf, sizeof(buf)), "inner");
	CHECK_STR(fr_frame_name(&out[1], false, buf, sizeof(buf)), "middle");
	CHECK_STR(fr_frame_module(&out[1], buf, sizeof(buf)), "/usr/bin/app");
	/* as many as there is room for, innermost first */
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 1, &f, out, 1), 1);
	CHECK_STR(fr_frame_name(&out[0], true, buf, sizeof(buf)), "inner");
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 1, &f, out, 0), 0);
	/* the leaf at itself: 0x555500001104 is i2's; as a return address
	 * it would be looked up at ...1103, which has none */
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x555500001104ULL, &f);
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 0, &f, out, 4), 1);
	CHECK_STR(fr_frame_name(&out[0], true, buf, sizeof(buf)), "only");
	fr_symtab_resolve(&t, NULL, &sample, 1, 0x555500001104ULL, &f);
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 1, &f, out, 4), 0);
	/* empty names name nothing */
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x555500001120ULL, &f);
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 0, &f, out, 4), 2);
	CHECK(out[0].sym_len == 1 && out[0].sym[0] == 'a' && out[1].sym_len == 1 && out[1].sym[0] == 'b');
	/* another pid's never apply; kernel frames are never expanded */
	sample.pid = 9;
	fr_symtab_resolve(&t, NULL, &sample, 0, 0x555500001104ULL, &f);
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 0, &f, out, 4), 0);
	sample.stack.kernel_frames = 1;
	fr_symtab_resolve(&t, NULL, &sample, 0, 0xffffffff81001010ULL, &f);
	CHECK(f.kernel);
	CHECK_EQ(fr_symtab_inlined(&t, &sample, 0, &f, out, 4), 0);
	CHECK_EQ(fr_symtab_inlined(NULL, &sample, 0, &f, out, 4), 0);
	fr_symtab_done(&t);
	CHECK(t.inls == NULL && t.ninls == 0);
}

/* User frames whose "address" says why the stack ends: named by that,
 * without module, offset or build id, looked up nowhere (not even one
 * byte back); those not known yet unnamed; kernel frames are never
 * markers. */
static void test_markers(void)
{
	static const struct { uint64_t addr; const char *name; } want[] = {
		{ FR_FRAME_TRUNCATED, "[truncated]" },
		{ FR_FRAME_NO_UNWIND_INFO, "[no unwind info]" },
		{ FR_FRAME_UNWIND_FAILED, "[unwind failed]" },
	};
	struct fr_symtab t = {};
	struct fr_record sample = { .type = FR_REC_SAMPLE, .pid = 7 };
	/* a table that would name address 0 and 1 if they were looked up */
	struct fr_record low = sym(7, 0, 0x100, "low", ""), in = inl(7, 1, "x", 1), m = { .type = FR_REC_MAPPING, .pid = 7 };
	struct fr_frame f, out[2];
	char buf[64];

	m.mapping.start = 0;
	m.mapping.end = 0x1000;
	m.mapping.path = "/x";
	m.mapping.path_len = 2;
	CHECK_EQ(fr_symtab_add(&t, &low), 0);
	CHECK_EQ(fr_symtab_add(&t, &in), 0);
	CHECK_EQ(fr_symtab_add(&t, &m), 0);
	fr_symtab_finish(&t);
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_STR(fr_frame_marker_name(want[i].addr), want[i].name);
		CHECK_EQ(fr_frame_lookup_addr(want[i].addr, 0), want[i].addr);
		for (unsigned leaf = 0; leaf < 2; leaf++) {
			fr_symtab_resolve(&t, NULL, &sample, leaf ? 0 : 3, want[i].addr, &f);
			CHECK(!f.kernel && !f.inlined && f.addr == want[i].addr);
			CHECK(f.sym && f.sym_len == strlen(want[i].name) && memcmp(f.sym, want[i].name, f.sym_len) == 0);
			CHECK(!f.module && !f.has_offset && !f.build_id && f.sym_off == 0);
			CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), want[i].name);
			CHECK_STR(fr_frame_name(&f, false, buf, sizeof(buf)), want[i].name);
			CHECK(fr_frame_module(&f, buf, sizeof(buf)) == NULL);
			CHECK_EQ(fr_symtab_inlined(&t, &sample, leaf ? 0 : 3, &f, out, 2), 0);
		}
	}
	CHECK(fr_frame_marker_name(0) == NULL);
	CHECK(fr_frame_marker_name(5) == NULL);
	CHECK(fr_frame_marker_name(FR_FRAME_MARKER_MAX) == NULL);
	CHECK(fr_frame_marker_name(0x555500001104ULL) == NULL);
	CHECK_EQ(fr_frame_lookup_addr(0, 0), 0);
	CHECK_EQ(fr_frame_lookup_addr(FR_FRAME_MARKER_MAX - 1, 0), FR_FRAME_MARKER_MAX - 1);
	CHECK_EQ(fr_frame_lookup_addr(FR_FRAME_MARKER_MAX, 0), FR_FRAME_MARKER_MAX - 1);
	CHECK_EQ(fr_frame_lookup_addr(0x1000, 0), 0xfff);
	CHECK_EQ(fr_frame_lookup_addr(0x1000, 1), 0x1000);
	/* a marker this reader does not know, and 0: unnamed, not looked up */
	fr_symtab_resolve(&t, NULL, &sample, 0, 5, &f);
	CHECK(!f.sym && !f.module);
	CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), "[unknown]@0x5");
	fr_symtab_resolve(&t, NULL, &sample, 1, 0, &f);
	CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), "[unknown]@0x0");
	/* the first address that is one */
	fr_symtab_resolve(&t, NULL, &sample, 0, FR_FRAME_MARKER_MAX, &f);
	CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), "low+0x10");
	/* the kernel's frames are never markers */
	sample.stack.kernel_frames = 1;
	fr_symtab_resolve(&t, NULL, &sample, 0, FR_FRAME_TRUNCATED, &f);
	CHECK(f.kernel && !f.sym);
	CHECK_STR(fr_frame_name(&f, true, buf, sizeof(buf)), "[kernel.kallsyms]@0x1");
	fr_symtab_done(&t);
}

/* A snapshot of more text than one buffer of the streamed save (64 KiB):
 * 20,000 functions, unsorted in the text, some in modules, saved and
 * loaded back whole; the loaded text is sorted (the load's fast path). */
static void test_ksyms_large(void)
{
	enum { N = 20000 };
	char tmpl[] = "/tmp/fr-test-ksyms-XXXXXX", *dir, *text = NULL;
	struct fr_ksyms *k = NULL, *back = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int dfd;

	CHECK(f != NULL);
	for (int i = N - 1; i >= 0; i--)
		fprintf(f, "%016llx T function_number_%05d_with_a_long_name%s\n", 0xffffffff81000000ULL + 0x100ULL * (unsigned)i,
			i, i % 7 == 0 ? "\t[some_module]" : "");
	CHECK(fclose(f) == 0);
	CHECK_EQ(fr_ksyms_parse(text, len, &k), 0);
	CHECK_EQ(fr_ksyms_count(k), N);
	dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(fr_ksyms_save(k, dfd, "00000000000000000000000000000042"), 1);
	CHECK_EQ(fr_ksyms_load_snapshot(dfd, "00000000000000000000000000000042", &back), 0);
	CHECK(fr_ksyms_same_functions(k, back));
	const struct fr_ksym *s = fr_ksyms_lookup(back, 0xffffffff81000000ULL + 0x100ULL * 14000 + 0x10);
	CHECK(s && strcmp(s->name, "function_number_14000_with_a_long_name") == 0 && strcmp(s->module, "some_module") == 0);
	s = fr_ksyms_lookup(back, 0xffffffff81000000ULL + 0x100ULL * (N - 2) + 0x10);
	CHECK(s && strcmp(s->name, "function_number_19998_with_a_long_name") == 0 && strcmp(s->module, "") == 0);
	fr_ksyms_free(k);
	fr_ksyms_free(back);
	close(dfd);
	CHECK(system("rm -rf /tmp/fr-test-ksyms-*") == 0);
}

int main(void)
{
	test_ksyms();
	test_ksyms_large();
	test_resolve();
	test_python();
	test_inline();
	test_markers();
	return TEST_DONE();
}
