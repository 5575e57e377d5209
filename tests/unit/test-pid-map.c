/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pid map against a plain array, through growth and removals. */
#include <stdint.h>

#include "pid-map.h"
#include "test.h"

#define N 20000

int main(void)
{
	static int vals[N];
	static int present[N];
	struct fr_pid_map m = {};
	uint64_t rng = 12345;

	for (int round = 0; round < 200000; round++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t pid = (uint32_t)(rng >> 33) % N;
		void *old;
		if ((rng >> 20) & 1) {
			CHECK_EQ(fr_pid_map_put(&m, pid, &vals[pid], &old), 0);
			CHECK(old == (present[pid] ? &vals[pid] : NULL));
			present[pid] = 1;
		} else {
			old = fr_pid_map_remove(&m, pid);
			CHECK(old == (present[pid] ? &vals[pid] : NULL));
			present[pid] = 0;
		}
	}
	size_t n = 0, i = 0;
	uint32_t pid;
	for (uint32_t p = 0; p < N; p++) {
		CHECK(fr_pid_map_get(&m, p) == (present[p] ? &vals[p] : NULL));
		n += (size_t)present[p];
	}
	CHECK_EQ(m.n, n);
	size_t seen = 0;
	void *v;
	while ((v = fr_pid_map_next(&m, &i, &pid))) {
		CHECK(v == &vals[pid] && present[pid]);
		seen++;
	}
	CHECK_EQ(seen, n);
	fr_pid_map_done(&m);
	return TEST_DONE();
}
