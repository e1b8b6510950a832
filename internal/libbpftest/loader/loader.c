// SPDX-License-Identifier: GPL-2.0
/*
 * loader.c: lets libbpf judge a minimized BTF. It opens a BPF object with
 * btf_custom_path set to the target BTF given (what libbpf-tools and
 * libbpfgo do with the output of bpftool gen min_core_btf), loads it, and
 * prints libbpf's debug log, which states every CO-RE decision
 * ("prog 'p': relo #3: patched insn #8 (LDX/ST/STX) off 4 -> 16",
 * "substituting insn #8 w/ invalid insn", "failed to relocate: -22"),
 * followed by one result line. Package libbpftest parses the log.
 *
 * Loading needs bpf() (root or CAP_BPF): libbpf probes the kernel and
 * creates the object's maps before relocating. Whether the programs then
 * pass the verifier does not matter: relocation is done by then.
 *
 * Usage: loader <object> <target-btf>
 * Exit status: 0 when libbpf got as far as relocating, 2 when bpf() is
 * refused, 1 on bad usage or an object libbpf cannot open.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stdout, fmt, ap);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s <object> <target-btf>\n", argv[0]);
		return 1;
	}
	/* Without bpf(), libbpf fails before relocating: say so apart. */
	int ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SOCKET_FILTER, NULL);
	if (ret != 1) {
		printf("result: no bpf: probe gives %d\n", ret);
		return 2;
	}

	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = argv[2]);
	libbpf_set_print(print);
	struct bpf_object *obj = bpf_object__open_file(argv[1], &opts);
	if (!obj) {
		fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	int err = bpf_object__load(obj);
	printf("result: load %d\n", err);
	bpf_object__close(obj);
	return 0;
}
