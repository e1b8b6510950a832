/* A stand-in module with DWARF: its struct list_head is vmlinux.c's, so its
 * split BTF refers to the base for it. */
struct list_head {
	struct list_head *next, *prev;
};

struct btfembed_testmod_state {
	struct list_head node;
	unsigned long hits;
};

unsigned long btfembed_testmod_hit(struct btfembed_testmod_state *s)
{
	return ++s->hits;
}
