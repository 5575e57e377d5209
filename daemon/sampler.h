/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-CPU perf events driving the profile BPF program: hardware cycles
 * where the PMU offers them, else the cpu-clock software event. */
#ifndef FR_SAMPLER_H
#define FR_SAMPLER_H

struct bpf_program;
struct fr_sampler;

int fr_sampler_attach(struct bpf_program *prog, unsigned ncpu, unsigned hz, struct fr_sampler **ret);
struct fr_sampler *fr_sampler_free(struct fr_sampler *s);
/* "cycles" or "cpu-clock" */
const char *fr_sampler_event(const struct fr_sampler *s);
unsigned fr_sampler_hz(const struct fr_sampler *s);

#endif
