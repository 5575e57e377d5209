/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/elf-eh-frame.c on the system's own libraries: libLLVM-14 (linked by
 * lld: .eh_frame_hdr after .eh_frame; installed with clang, which builds
 * the BPF programs) is changed, libc (GNU ld's order) is not.  Every
 * lookup finds the same FDE as libdw finds in the file unchanged, at 128
 * addresses across .text, and the lookups of the changed file take a
 * fraction of the heap (5.4 MiB for one lookup unchanged, measured). */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../daemon/heap.h"
#include "../../lib/elf-eh-frame.h"
#include "test.h"

#define LOOKUPS 128

struct opened {
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;
};

static int open_cfi(const char *path, bool by_table, struct opened *o, int *changed)
{
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	o->elf = o->fd >= 0 ? elf_begin(o->fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!o->elf)
		return -1;
	*changed = by_table ? fr_elf_eh_frame_by_table(o->elf) : 0;
	o->cfi = dwarf_getcfi_elf(o->elf);
	return o->cfi ? 0 : -1;
}

static void close_cfi(struct opened *o)
{
	dwarf_cfi_end(o->cfi);
	elf_end(o->elf);
	close(o->fd);
}

/* The .text range of @elf. */
static int text_range(Elf *elf, GElf_Addr *start, GElf_Addr *end)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr s;
		const char *n;

		if (gelf_getshdr(scn, &s) && (n = elf_strptr(elf, shstrndx, s.sh_name)) && strcmp(n, ".text") == 0) {
			*start = s.sh_addr;
			*end = s.sh_addr + s.sh_size;
			return 0;
		}
	}
	return -1;
}

/* The range of the FDE covering @a into @range, {0, 0} for none. */
static void lookup(Dwarf_CFI *cfi, Dwarf_Addr a, Dwarf_Addr range[2])
{
	Dwarf_Frame *f = NULL;
	bool sig;

	range[0] = range[1] = 0;
	if (dwarf_cfi_addrframe(cfi, a, &f) == 0)
		dwarf_frame_info(f, &range[0], &range[1], &sig);
	free(f);
}

/* Looks up LOOKUPS addresses in both; returns the heap the changed
 * one's lookups took. */
static size_t compare(const char *path, int want_changed)
{
	struct opened plain, by_table;
	GElf_Addr start = 0, end = 0;
	size_t before, after;
	int changed = -1, unused;

	CHECK(open_cfi(path, false, &plain, &unused) == 0);
	CHECK(open_cfi(path, true, &by_table, &changed) == 0);
	CHECK_EQ(changed, want_changed);
	CHECK(text_range(plain.elf, &start, &end) == 0);
	before = fr_heap_in_use();
	/* the changed file first: its heap is measured alone */
	Dwarf_Addr got[LOOKUPS][2], want[2];
	for (int i = 0; i < LOOKUPS; i++)
		lookup(by_table.cfi, start + (end - start) / LOOKUPS * (GElf_Addr)i + 7, got[i]);
	after = fr_heap_in_use();
	int found = 0;
	for (int i = 0; i < LOOKUPS; i++) {
		lookup(plain.cfi, start + (end - start) / LOOKUPS * (GElf_Addr)i + 7, want);
		CHECK_EQ(got[i][0], want[0]);
		CHECK_EQ(got[i][1], want[1]);
		found += want[0] != 0;
	}
	CHECK(found >= LOOKUPS / 2);
	printf("%s: changed %d, %d of %d addresses have an FDE, the same in both; lookups took %zu KiB\n", path,
	       changed, found, LOOKUPS, (after - before) >> 10);
	close_cfi(&plain);
	close_cfi(&by_table);
	return after - before;
}

int main(void)
{
	const char *llvm = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	size_t heap;

	elf_version(EV_CURRENT);
	CHECK(access(llvm, R_OK) == 0); /* Debian's llvm-14, scripts/deps.sh */
	heap = compare(llvm, 1);
	/* 128 FDEs and their CIE, not the tens of thousands before them */
	CHECK(heap < (512u << 10));
	compare(libc, 0);
	return TEST_DONE();
}
