/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Names and formats of record fields shared by every output. */
#include <arpa/inet.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "record-fields.h"

const char *fr_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else if (sig > 0)
		snprintf(buf, len, "SIG%d", sig);
	else
		return NULL;
	return buf;
}

/* si_code values of include/uapi/asm-generic/siginfo.h: the generic ones
 * (<= 0, and SI_KERNEL), then those of each fault signal (> 0). */
const char *fr_signal_code_name(int sig, int code)
{
	static const char *const segv[] = { NULL, "SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR",
					    "SEGV_ACCADI", "SEGV_ADIDERR", "SEGV_ADIPERR", "SEGV_MTEAERR",
					    "SEGV_MTESERR", "SEGV_CPERR" };
	static const char *const bus[] = { NULL, "BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR",
					   "BUS_MCEERR_AO" };
	static const char *const ill[] = { NULL, "ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP",
					   "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK", "ILL_BADIADDR" };
	static const char *const fpe[] = { NULL, "FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF",
					   "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB" };
	static const char *const trap[] = { NULL, "TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT",
					    "TRAP_UNK", "TRAP_PERF" };
	static const char *const sys[] = { NULL, "SYS_SECCOMP", "SYS_USER_DISPATCH" };
	static const char *const generic[] = { "SI_USER", "SI_QUEUE", "SI_TIMER", "SI_MESGQ",
					       "SI_ASYNCIO", "SI_SIGIO", "SI_TKILL", "SI_DETHREAD" };
	const char *const *t = NULL;
	size_t n = 0;

#define TABLE(x) (t = (x), n = sizeof(x) / sizeof((x)[0]))
	if (code == 0x80)
		return "SI_KERNEL";
	if (code <= 0)
		return -code < (int)(sizeof(generic) / sizeof(generic[0])) ? generic[-code] :
		       code == -60                                          ? "SI_ASYNCNL" : NULL;
	switch (sig) {
	case SIGSEGV: TABLE(segv); break;
	case SIGBUS: TABLE(bus); break;
	case SIGILL: TABLE(ill); break;
	case SIGFPE: TABLE(fpe); break;
	case SIGTRAP: TABLE(trap); break;
	case SIGSYS: TABLE(sys); break;
	}
#undef TABLE
	return t && (size_t)code < n ? t[code] : NULL;
}

const char *fr_signal_stack_name(uint8_t stack)
{
	switch (stack) {
	case FR_SIGNAL_STACK_TAKEN: return "taken";
	case FR_SIGNAL_STACK_KTHREAD: return "kernel_thread";
	case FR_SIGNAL_STACK_OVER: return "over_budget";
	case FR_SIGNAL_STACK_NONE: return "not_recorded";
	}
	return "unknown";
}

/* REQ_OP_* of include/linux/blk_types.h */
const char *fr_block_op_name(uint32_t op)
{
	static const char *const names[] = { "read", "write", "flush", "discard", NULL, "secure_erase",
					     NULL, NULL, NULL, "write_zeroes" };

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "other";
}

const char *fr_tcp_event_name(uint8_t event)
{
	switch (event) {
	case 1: return "retransmit";
	case 2: return "reset_sent";
	case 3: return "reset_received";
	}
	return "unknown";
}

/* TCP_* states of include/net/tcp_states.h */
const char *fr_tcp_state_name(uint8_t state)
{
	static const char *const names[] = { "?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1",
					     "FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK",
					     "LISTEN", "CLOSING", "NEW_SYN_RECV" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

char *fr_format_addr(uint16_t family, const uint8_t *addr, char *buf, size_t len)
{
	if (!inet_ntop(family == 10 ? AF_INET6 : AF_INET, addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

const char *fr_format_tcp_addr(const struct fr_record *r, const uint8_t *addr, char *buf, size_t len)
{
	if (r->flags & FR_REC_F_ADDR_REDACTED)
		return "[redacted]";
	return fr_format_addr(r->tcp.family, addr, buf, len);
}

/* the kernel's dev_t: major << 20 | minor */
char *fr_format_dev(uint32_t dev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
	return buf;
}

char *fr_format_hex(const uint8_t *p, size_t n, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	if (len < 2 * n + 1) {
		if (len)
			buf[0] = 0;
		return buf;
	}
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = hex[p[i] >> 4];
		buf[2 * i + 1] = hex[p[i] & 15];
	}
	buf[2 * n] = 0;
	return buf;
}

char *fr_format_boot_id(const uint8_t id[16], char *buf, size_t len)
{
	return fr_format_hex(id, 16, buf, len);
}

uint64_t fr_record_duration_ns(const struct fr_record *r)
{
	/* (the types of FR_RT_DURATION; test-record-json checks the two agree) */
	switch ((enum fr_record_type)r->type) {
	case FR_REC_SYSCALL: return r->syscall.duration_ns;
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ: return r->sched.duration_ns;
	case FR_REC_BLOCK: return r->block.duration_ns;
	case FR_REC_EXEC:
	case FR_REC_EXIT:
	case FR_REC_FORK:
	case FR_REC_OOM:
	case FR_REC_SIGNAL:
	case FR_REC_TCP:
	case FR_REC_SWITCH:
	case FR_REC_SAMPLE:
	case FR_REC_GAP:
	case FR_REC_MARK:
	case FR_REC_METRICS:
	case FR_REC_TRIGGER:
	FR_REC_META_CASES
		break;
	}
	return 0;
}

struct json_object *fr_record_metrics(const struct fr_record *r)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *m;

	if (!tok)
		return NULL;
	m = json_tokener_parse_ex(tok, r->metrics.json, (int)r->metrics.json_len);
	/* read no further than the record: one object, complete */
	if (m && (json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(m, json_type_object))) {
		json_object_put(m);
		m = NULL;
	}
	json_tokener_free(tok);
	return m;
}
