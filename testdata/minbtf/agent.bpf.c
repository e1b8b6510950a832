#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct event { u32 pid, ppid, uid; u64 start; char comm[16]; char fname[64]; u16 sport, dport; u32 saddr, daddr; u64 ino; u32 mode; };
struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 1 << 20); } events SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int exec(struct trace_event_raw_sched_process_exec *ctx) {
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) return 0;
	e->pid = BPF_CORE_READ(t, tgid);
	e->ppid = BPF_CORE_READ(t, real_parent, tgid);
	e->uid = BPF_CORE_READ(t, cred, uid.val);
	e->start = BPF_CORE_READ(t, start_time);
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	e->ino = BPF_CORE_READ(t, mm, exe_file, f_inode, i_ino);
	e->mode = BPF_CORE_READ(t, mm, exe_file, f_inode, i_mode);
	unsigned off = ctx->__data_loc_filename & 0xffff;
	bpf_probe_read_str(e->fname, sizeof(e->fname), (void *)ctx + off);
	if (bpf_core_field_exists(t->loginuid)) e->uid = BPF_CORE_READ(t, loginuid.val);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("kprobe/tcp_connect")
int BPF_KPROBE(tcp_connect, struct sock *sk) {
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) return 0;
	e->sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e->dport = BPF_CORE_READ(sk, __sk_common.skc_dport);
	e->saddr = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
	e->daddr = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	e->ino = BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
	e->mode = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	e->start = BPF_CORE_READ(tp, srtt_us) + BPF_CORE_READ(tp, snd_cwnd) + BPF_CORE_READ(tp, bytes_received);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("kprobe/vfs_open")
int BPF_KPROBE(vfs_open, struct path *path, struct file *file) {
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) return 0;
	e->ino = BPF_CORE_READ(path, dentry, d_inode, i_ino);
	e->mode = BPF_CORE_READ(file, f_flags) | BPF_CORE_READ(path, mnt, mnt_flags);
	BPF_CORE_READ_STR_INTO(&e->fname, path, dentry, d_name.name);
	e->uid = BPF_CORE_READ(file, f_cred, fsuid.val);
	e->start = BPF_CORE_READ(path, dentry, d_sb, s_dev);
	if (bpf_core_type_exists(struct bpf_iter_num)) e->start++;
	e->pid = bpf_core_enum_value(enum bpf_func_id, BPF_FUNC_ringbuf_output);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next) {
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) return 0;
	e->pid = prev->pid; e->ppid = next->pid;
	e->start = prev->se.sum_exec_runtime + next->nvcsw + prev->signal->nr_threads;
	e->ino = BPF_CORE_READ(prev, nsproxy, pid_ns_for_children, ns.inum);
	e->mode = BPF_CORE_READ(prev, cgroups, dfl_cgrp, kn, id);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
