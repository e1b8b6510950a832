package cache

import (
	"testing"

	"golang.org/x/sys/unix"
)

// mountRO makes dir read-only with a read-only bind mount of itself, which
// even root cannot write through; it skips without the privilege.
func mountRO(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount %s: %v (needs CAP_SYS_ADMIN)", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("remount %s read-only: %v", dir, err)
	}
}
