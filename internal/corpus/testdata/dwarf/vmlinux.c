/* A stand-in vmlinux for the fast DWARF import tests: compiled with cc -g,
 * its DWARF becomes BTF through pahole, and its banner tells the release as
 * init/version.c's does. */
const char linux_banner[] =
	"Linux version 6.99.0-9-dbgtest (debian-kernel@lists.debian.org) "
	"(gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0) #1 SMP Debian 6.99.1-1\n";

struct list_head {
	struct list_head *next, *prev;
};

struct task_struct {
	struct list_head tasks;
	int pid;
	unsigned long flags;
};

int task_pid(struct task_struct *t)
{
	return t->pid;
}
