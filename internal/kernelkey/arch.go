package kernelkey

import "github.com/btfembed/btfembed/internal/kernelarch"

// NormalizeArch returns the canonical name of an architecture (x86_64,
// arm64, s390x, ppc64le, ppc64, riscv64, loongarch64, mips64el, arm or
// i386: the names BTFHub gives its directories) and true, or s unchanged
// and false for a spelling it does not know (uname -m, Debian and RPM
// architecture names and Go's GOARCH are known). The generator keys
// embedded kernels with it and the runtime keys the running kernel with
// it, so both sides agree; a Key built for Assets.Lookup needs it too.
func NormalizeArch(s string) (string, bool) { return kernelarch.Normalize(s) }
