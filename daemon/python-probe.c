/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gelf.h>
#include <stdbool.h>
#include <string.h>

#include "python-probe.h"

/* The value of the 8-byte object @sym in the file (Py_Version, in a
 * read-only section); 0 when it cannot be read. */
static uint64_t read_u64_object(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;
	uint64_t v = 0, off;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || sym->st_size != 8)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || sym->st_value < sh.sh_addr)
		return 0;
	off = sym->st_value - sh.sh_addr;
	if (off > d->d_size || d->d_size - off < 8)
		return 0;
	memcpy(&v, (const char *)d->d_buf + off, 8);
	return v;
}

void fr_python_probe_elf(Elf *elf, struct fr_py_probe *ret)
{
	GElf_Sym runtime = {}, version = {};
	uint64_t text = UINT64_MAX;
	bool have_runtime = false, have_version = false, interp = false;
	Elf_Scn *scn = NULL;
	size_t nph;

	*ret = (struct fr_py_probe){};
	/* the lowest executable segment: where mm->start_code points to
	 * once loaded (fs/binfmt_elf.c), whatever the load bias */
	if (elf_getphdrnum(elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_vaddr < text)
			text = ph.p_vaddr;
		interp |= ph.p_type == PT_INTERP;
	}
	/* only an executable (it names its dynamic loader) can be walked
	 * (py_exes is keyed by the executable): libraries are not read */
	if (text == UINT64_MAX || !interp)
		return;
	while ((scn = elf_nextscn(elf, scn)) && !(have_runtime && have_version)) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
			    s.st_shndx == SHN_UNDEF || !(name = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			if (!have_runtime && strcmp(name, "_PyRuntime") == 0) {
				runtime = s;
				have_runtime = true;
			} else if (!have_version && strcmp(name, "Py_Version") == 0) {
				version = s;
				have_version = true;
			}
		}
	}
	if (!have_runtime || runtime.st_value < text)
		return;
	ret->runtime_rel = runtime.st_value - text;
	ret->version = have_version ? (uint32_t)read_u64_object(elf, &version) : 0;
	ret->found = 1;
}
