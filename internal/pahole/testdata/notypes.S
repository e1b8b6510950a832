/* An object whose DWARF (line tables, one compilation unit) describes no
 * type: pahole exits 0 and writes no BTF. */
	.text
	.globl	btfembed_notypes
btfembed_notypes:
	ret
