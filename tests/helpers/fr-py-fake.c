/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program that looks like a CPython to flightrecd (daemon/python-probe.c):
 * it exports _PyRuntime and Py_Version (FR_PY_VERSION, PY_VERSION_HEX;
 * 3.12.0 unless built otherwise), and spins SECONDS of CPU in a function
 * named _PyEval_EvalFrameDefault, the native frame Python frames replace.
 * Its _PyRuntime holds one interpreter, thread and frame laid out as
 * CPython 3.11 lays them out (lib/python-offsets.c), running a code object
 * named "fake_frame" in "/fr-py-fake.py": walked as a 3.11, its samples
 * name that frame; a daemon that does not know its version must not.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FR_PY_VERSION
#define FR_PY_VERSION 0x030c00f0
#endif

/* what python-probe.c looks for: 8 bytes in .rodata, an object in .bss */
extern const uint64_t Py_Version;
const uint64_t Py_Version = FR_PY_VERSION;
extern uint8_t fake_runtime[64] __asm__("_PyRuntime");
__attribute__((aligned(16))) uint8_t fake_runtime[64];

/* each object bigger than the bytes BPF reads of it (bpf/python.bpf.h) */
static __attribute__((aligned(16))) uint8_t interp[64], tstate[256], cframe[32], frame[128], code[256],
	qualname[128], filename[128], linetable[64];

static volatile uint64_t sink;

static void put64(uint8_t *obj, size_t off, uint64_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

/* a compact ASCII string (PyASCIIObject: length at 16, state at 32, the
 * characters from 48) */
static void make_str(uint8_t *obj, const char *s)
{
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6; /* kind 1, compact, ascii */

	put64(obj, 16, strlen(s));
	memcpy(obj + 32, &state, sizeof(state));
	memcpy(obj + 48, s, strlen(s));
}

/* 3.11's offsets, as lib/python-offsets.c has them */
static void make_state(void)
{
	int32_t first = 1;

	put64(fake_runtime, 40, (uintptr_t)interp);            /* interpreters.head */
	put64(interp, 16, (uintptr_t)tstate);                  /* threads.head */
	put64(tstate, 152, (uint64_t)pthread_self());          /* thread_id */
	put64(tstate, 56, (uintptr_t)cframe);                  /* cframe */
	put64(cframe, 8, (uintptr_t)frame);                    /* current_frame */
	put64(frame, 32, (uintptr_t)code);                     /* f_code */
	put64(frame, 56, (uintptr_t)code + 184);               /* prev_instr */
	frame[68] = 1;                                         /* is_entry */
	memcpy(code + 72, &first, sizeof(first));              /* co_firstlineno */
	put64(code, 112, (uintptr_t)filename);                 /* co_filename */
	put64(code, 128, (uintptr_t)qualname);                 /* co_qualname */
	put64(code, 136, (uintptr_t)linetable);                /* co_linetable, empty */
	make_str(qualname, "fake_frame");
	make_str(filename, "/fr-py-fake.py");
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void eval_frame(uint64_t ns) __asm__("_PyEval_EvalFrameDefault");

__attribute__((noinline)) void eval_frame(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;

	while (cpu_ns() < end)
		for (unsigned i = 0; i < 20000; i++)
			sink += i * i;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;

	make_state();
	eval_frame((uint64_t)(secs * 1e9));
	return 0;
}
