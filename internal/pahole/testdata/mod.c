/* A module-shaped object for the pahole tests: compiled with cc -g, its
 * DWARF is encoded standalone and as split BTF over base.c's. */
struct list_head {
	struct list_head *next, *prev;
};

struct btfembed_testmod_state {
	struct list_head node;
	unsigned long hits;
	int cpu;
	char name[16];
};

int btfembed_testmod_hit(struct btfembed_testmod_state *s)
{
	s->hits++;
	return s->cpu;
}
