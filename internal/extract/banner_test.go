package extract

import (
	"os"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestParseBanner reads real banners, each after "Linux version ": those
// of the shared corpus's Debian images (read with a script of Python's
// lzma, zstd and lz4, not this package), of its kernel built without BTF,
// and of Ubuntu, RHEL and Fedora kernels. Debian 11's carries no +deb11
// mark: its package version (5.10.223-1) says bullseye.
func TestParseBanner(t *testing.T) {
	tests := []struct {
		line string
		want BannerInfo
	}{
		{"5.10.0-32-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.223-1 (2024-08-10)",
			BannerInfo{"5.10.0-32-amd64", "debian", "11", "Debian 5.10.223-1: Debian 11 ships 5.10"}},
		{"6.1.0-47-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) # SMP PREEMPT_DYNAMIC Debian 6.1.170-3 (2026-05-08)",
			BannerInfo{"6.1.0-47-amd64", "debian", "12", "+deb12"}},
		{"6.12.118+deb12-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) # SMP PREEMPT_DYNAMIC Debian 6.12.118-1~deb12u1 (2026-11-28)",
			BannerInfo{"6.12.118+deb12-amd64", "debian", "12", "+deb12"}},
		// The shared corpus's own build on Debian 12: only the compiler says so.
		{"6.1.176 (root@vm) (gcc (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) # ",
			BannerInfo{"6.1.176", "debian", "12", "+deb12"}},
		// The same, had Debian 11's gcc built it: no mark, no package.
		{"6.1.176 (root@vm) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) # ",
			BannerInfo{"6.1.176", "debian", "11", "gcc Debian 10.2.1-6: Debian 11's gcc 10"}},
		// Debian 10's, before CC_VERSION_TEXT (5.8) changed the compiler's words.
		{"4.19.0-27-amd64 (debian-kernel@lists.debian.org) (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP Debian 4.19.316-1 (2024-06-25)",
			BannerInfo{"4.19.0-27-amd64", "debian", "10", "Debian 4.19.316-1: Debian 10 ships 4.19"}},
		{"6.1.0-0.deb11.21-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP PREEMPT_DYNAMIC Debian 6.1.90-1~bpo11+1 (2024-05-06)",
			BannerInfo{"6.1.0-0.deb11.21-amd64", "debian", "11", "~bpo11"}},
		// sid's: a series and compiler no release ships.
		{"6.16.3-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-15 (Debian 15.2.0-1) 15.2.0, GNU ld (GNU Binutils for Debian) 2.45) #1 SMP PREEMPT_DYNAMIC Debian 6.16.3-1 (2025-08-26)",
			BannerInfo{"6.16.3-amd64", "debian", "", "Debian"}},
		{"5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023",
			BannerInfo{"5.15.0-91-generic", "ubuntu", "22.04", "ubuntu1~22.04"}},
		{"5.14.0-362.8.1.el9_3.x86_64 (mockbuild@x86-vm-07.build.eng.bos.redhat.com) (gcc (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)) #1 SMP PREEMPT_DYNAMIC",
			BannerInfo{"5.14.0-362.8.1.el9_3.x86_64", "centos", "9", ".el9_3"}},
		{"6.5.6-300.fc39.x86_64 (mockbuild@) (gcc (GCC) 13.2.1) #1 SMP", BannerInfo{"6.5.6-300.fc39.x86_64", "fedora", "39", ".fc39"}},
		{"6.7.0 (me@host) (gcc 13) #1 SMP", BannerInfo{Release: "6.7.0"}},
	}
	for _, tt := range tests {
		if got := ParseBanner(tt.line); got != tt.want {
			t.Errorf("ParseBanner(%.30q...) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
	if _, ok := FindBanner([]byte("printk(\"Linux version %s\")")); ok {
		t.Error("format string taken for a banner")
	}
}

// TestImageBannerDebian11 reads the banner of Debian 11's image in the
// shared corpus, whose BTFHub archive is kept under debian/11.
func TestImageBannerDebian11(t *testing.T) {
	data, err := os.ReadFile(kerneltest.SharedFile(t, "images", "vmlinuz-5.10.0-32-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := FindImageBTF(data)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Banner; b.Distro != "debian" || b.Version != "11" || b.Release != "5.10.0-32-amd64" {
		t.Errorf("banner %+v, want debian 11's 5.10.0-32-amd64", b)
	}
}
