package extract

import "testing"

func TestParseBanner(t *testing.T) {
	tests := []struct {
		line string
		want BannerInfo
	}{
		{"6.1.0-57-arm64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP Debian 6.1.192-3 (2026-11-26)",
			BannerInfo{"6.1.0-57-arm64", "debian", "12"}},
		{"5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023",
			BannerInfo{"5.15.0-91-generic", "ubuntu", "22.04"}},
		{"5.14.0-362.8.1.el9_3.x86_64 (mockbuild@x86-vm-07.build.eng.bos.redhat.com) (gcc (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)) #1 SMP PREEMPT_DYNAMIC",
			BannerInfo{"5.14.0-362.8.1.el9_3.x86_64", "centos", "9"}},
		{"6.5.6-300.fc39.x86_64 (mockbuild@) (gcc (GCC) 13.2.1) #1 SMP", BannerInfo{"6.5.6-300.fc39.x86_64", "fedora", "39"}},
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
