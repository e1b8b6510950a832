package runtime

import "github.com/btfembed/btfembed/runtime/kernelkey"

// Key identifies one embedded kernel; see package kernelkey, which also
// holds NormalizeArch, the architecture spelling both sides use.
type Key = kernelkey.Key
