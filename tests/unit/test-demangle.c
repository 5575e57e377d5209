/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* C++ names demangled (lib/demangle.c): a method, an operator and a
 * template as c++filt prints them; plain C names, names that do not
 * demangle and names over the bound left as they are (counted); a name
 * demangled once and kept (the same pointer the second time). */
#include <stdio.h>
#include <string.h>

#include "demangle.h"
#include "test.h"

static void check(struct fr_demangler *d, const char *mangled, const char *want)
{
	uint32_t len = 0;
	const char *got = fr_demangle(d, mangled, strlen(mangled), &len);

	if (!want) {
		CHECK(got == NULL);
		return;
	}
	CHECK(got != NULL);
	if (got && (len != strlen(want) || memcmp(got, want, len) != 0)) {
		fprintf(stderr, "%s: got '%.*s', want '%s'\n", mangled, (int)len, got, want);
		CHECK(0);
	}
}

int main(void)
{
	struct fr_demangler *d;
	struct fr_demangler_stats st;
	char longname[FR_DEMANGLE_NAME_MAX + 8];
	const char *a, *b;
	uint32_t la, lb;

	CHECK_EQ(fr_demangler_new(&d), 0);
	check(d, "_ZN4shop4Cart8checkoutEi", "shop::Cart::checkout(int)");
	check(d, "_ZNK2ns5ClassclERKSt6vectorIiSaIiEE",
	      "ns::Class::operator()(std::vector<int, std::allocator<int> > const&) const");
	check(d, "_Z3maxIiET_S0_S0_", "int max<int>(int, int)");
	check(d, "main", NULL);
	check(d, "__libc_start_main", NULL);
	check(d, "_Z", NULL);
	check(d, "_Zgarbage!", NULL);
	/* not NUL-terminated where it ends: only len bytes are read */
	la = 0;
	CHECK(fr_demangle(d, "_ZN4shop4Cart8checkoutEiXXXX", strlen("_ZN4shop4Cart8checkoutEi"), &la) != NULL);
	/* kept: the second lookup returns the first one's string */
	a = fr_demangle(d, "_ZN4shop4Cart8checkoutEi", strlen("_ZN4shop4Cart8checkoutEi"), &la);
	b = fr_demangle(d, "_ZN4shop4Cart8checkoutEi", strlen("_ZN4shop4Cart8checkoutEi"), &lb);
	CHECK(a && a == b && la == lb);
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "_ZN", 3);
	CHECK(fr_demangle(d, longname, sizeof(longname), &la) == NULL);
	/* many names: the table grows and keeps them all */
	for (int i = 0; i < 5000; i++) {
		char m[64], want[64], fn[16];
		int fl = snprintf(fn, sizeof(fn), "f%d", i);
		snprintf(m, sizeof(m), "_ZN1n%d%sEv", fl, fn); /* n::fI() */
		snprintf(want, sizeof(want), "n::%s()", fn);
		check(d, m, want);
	}
	fr_demangler_get_stats(d, &st);
	CHECK(st.names >= 5004);
	CHECK_EQ(st.failed, 1u); /* "_Z" alone is no name to try */
	CHECK_EQ(st.not_kept, 1u);
	fr_demangler_free(d);
	return TEST_DONE();
}
