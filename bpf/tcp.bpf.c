// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* TCP trouble: retransmitted segments, resets sent and received, with the
 * connection's addresses and ports.  Resets sent for no socket (a closed
 * port) are not recorded: there is no connection to name. */
#include "emit.bpf.h"

#define AF_INET 2
#define AF_INET6 10

static __always_inline int emit(const struct sock *sk, __u8 event)
{
	struct fr_event_tcp *e;
	__u16 family;
	struct fr_slot slot;

	if (!sk || fr_is_self())
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_TCP, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_TCP);
	__builtin_memset(e->saddr, 0, sizeof(e->saddr));
	__builtin_memset(e->daddr, 0, sizeof(e->daddr));
	/* explicit sizes: BPF_CORE_READ_INTO into an array copies one element */
	if (family == AF_INET) {
		bpf_core_read(e->saddr, 4, &sk->__sk_common.skc_rcv_saddr);
		bpf_core_read(e->daddr, 4, &sk->__sk_common.skc_daddr);
	} else {
		bpf_core_read(e->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(e->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
	e->family = family;
	e->sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e->dport = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	e->event = event;
	e->state = BPF_CORE_READ(sk, __sk_common.skc_state);
	fr_submit(e, &slot);
	return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(fr_tcp_retransmit, const struct sock *sk)
{
	return emit(sk, FR_TCP_RETRANSMIT);
}

SEC("tp_btf/tcp_send_reset")
int BPF_PROG(fr_tcp_send_reset, const struct sock *sk)
{
	return emit(sk, FR_TCP_RESET_SENT);
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(fr_tcp_receive_reset, struct sock *sk)
{
	return emit(sk, FR_TCP_RESET_RECEIVED);
}
