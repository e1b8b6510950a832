/* The "vmlinux" of the pahole tests: the types mod.c shares with it. */
struct list_head {
	struct list_head *next, *prev;
};

struct btfembed_base_task {
	struct list_head tasks;
	int pid;
};

int btfembed_base_pid(struct btfembed_base_task *t)
{
	return t->pid;
}
