package runtime

import "github.com/btfembed/btfembed/internal/kernelkey"

// Key identifies one embedded kernel: its architecture (x86_64, arm64,
// i386, ... as BTFHub spells them), release (uname -r), and distribution
// and version where the corpus knows them. Assets.Lookup accepts any
// common spelling of the architecture (uname -m, GOARCH, Debian's).
type Key = kernelkey.Key

// Family is a distribution release's series of builds of one kernel that
// differ by ABI number only (Debian 12's 6.1.0-*-amd64), as
// FamilySelection names it.
type Family = kernelkey.Family
