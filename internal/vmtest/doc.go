// Package vmtest boots real kernel images in qemu to test btfembed the way
// it is deployed: on a kernel, not against an oracle.
//
// A test builds its /init, a static Go program (Build), packs it with the
// files it needs into a newc initramfs (WriteCPIO), and boots a kernel
// image with it (Run): qemu-system-x86_64, qemu-system-i386 or
// qemu-system-aarch64 with TCG (KVM is not assumed), the console on the
// first serial port, no reboot, panic=-1. The guest calls StartGuest (proc, sysfs, devtmpfs and tracefs
// mounted, /dev/console as stdio), reports results with Guest.Emit and ends
// with Guest.Done, which powers off.
//
// # Protocol
//
// Results travel on the serial console as lines
//
//	@btfembed-vmtest {"kind":"<kind>","data":<JSON>}
//
// amid kernel messages, which are ignored. The last record of a finished
// guest is kind "done", with {"error":"..."} if the guest failed. Run
// returns the records, the whole console and the boot time (qemu start to
// the first record); a guest that never reports "done" (a Go panic, a
// kernel panic, a hang past the timeout) is an error wrapping
// ErrIncomplete. qemu is killed when the test's context ends.
//
// Boots run in parallel, one per CPU. Tests call Require first: it skips
// under -short and where qemu is missing.
//
// # The field test
//
// TestField (field_test.go) is btfembed's proof on real kernels: it boots
// every kernel of $BTFEMBED_CORPUS that has BTF (Debian 12's, and Debian
// 11's 5.10 with its older verifier) with its BTF hidden and visible, and
// the kernels built without BTF as they are: nobtf/'s custom 6.1, whose
// corpus entry is imported from its DWARF with pahole, the same 6.1
// released as a vendor's 4.18.0-305.el8.x86_64 (testdata/vendorkernel,
// scripts/build-kernel-vendor.sh), whose release understates its BPF,
// and, with
// $BTFEMBED_FETCH set, Debian's 686-pae fetched from Debian's archive with
// its -dbg package (nobtf_test.go, kerneltest.Debian686PAE), booted in
// qemu-system-i386 with a GOARCH=386 /init, and a Linux 4.15 built from
// Ubuntu 18.04's kernel source (kerneltest.Ubuntu1804Kernel,
// scripts/build-kernel-4.15.sh), older than global data (5.2) and ring
// buffers (5.8). fieldinit is the /init; the
// test compares what loads, with itself and with package predict's load
// predictions (prediction_test.go); field.go holds the layout and records
// both sides share, and ProgramLoad is the per-program verdict other tools
// can compare against (-field.out writes them as FieldResult).
//
// TestFieldFamily (family_test.go), with $BTFEMBED_FETCH set, boots
// Debian 12 -amd64 builds that execsnoop's payload does not embed, the
// family allowed (FieldAllowFamily): 6.1.0-47-amd64 left out of a corpus
// of 6.1.0-50 and 6.1.0-53 fetched from Debian's archive
// (kerneltest.DebianAmd64), and 6.1.0-54, a build newer than its corpus;
// each must be served by a member of its stable family, saying so, and
// execsnoop must report the guest's exec. Not allowed, the selection must
// fail, saying the family would serve.
package vmtest
