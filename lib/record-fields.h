/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Names and formats of record fields, shared by every output (frctl's
 * formats, the daemon's incident metadata). */
#ifndef FR_RECORD_FIELDS_H
#define FR_RECORD_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* "SIGSEGV" for 11, "SIGRTMIN+n", "SIGn"; NULL for 0. */
const char *fr_signal_name(int sig, char *buf, size_t len);
/* The name of si_code @code of signal @sig ("SEGV_MAPERR", "SI_TKILL"),
 * or NULL when it has none we know. */
const char *fr_signal_code_name(int sig, int code);
/* What a signal record's stack is (FR_SIGNAL_STACK_* of record.h):
 * "taken", "kernel_thread", "over_budget", "not_recorded" (a chunk from
 * before signal stacks). */
const char *fr_signal_stack_name(uint8_t stack);
const char *fr_block_op_name(uint32_t op);
const char *fr_tcp_event_name(uint8_t event);
const char *fr_tcp_state_name(uint8_t state);
char *fr_format_addr(uint16_t family, const uint8_t *addr, char *buf, size_t len);
/* A TCP record's address @addr (its saddr or daddr): "[redacted]" when
 * frctl --redact cut it (FR_REC_F_ADDR_REDACTED). */
const char *fr_format_tcp_addr(const struct fr_record *r, const uint8_t *addr, char *buf, size_t len);
char *fr_format_dev(uint32_t dev, char *buf, size_t len);
/* 32 lower-case hex digits, as journalctl prints boot ids */
char *fr_format_boot_id(const uint8_t id[16], char *buf, size_t len);
/* @n bytes as lowercase hex; "" when @len is too small. */
/* How long an interval record (syscall, offcpu, runq, block) lasted from
 * its time stamp, its start; 0 for records of a moment. */
uint64_t fr_record_duration_ns(const struct fr_record *r);
char *fr_format_hex(const uint8_t *p, size_t n, char *buf, size_t len);
/* A metrics record's JSON parsed (it points into its chunk, without a
 * NUL), or NULL when it is not a JSON object.  The caller puts it. */
struct json_object;
struct json_object *fr_record_metrics(const struct fr_record *r);

#endif
