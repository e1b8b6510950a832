package kernelkey

import "testing"

func TestFamilyOf(t *testing.T) {
	deb := func(release string) Key {
		return Key{Arch: "x86_64", Release: release, Distro: "debian", Version: "12"}
	}
	for _, tc := range []struct {
		key  Key
		want string // Family.String, "" for none
		abi  uint64
	}{
		{deb("6.1.0-47-amd64"), "debian 12 x86_64 6.1.0-*-amd64", 47},
		{deb("6.1.0-50-cloud-amd64"), "debian 12 x86_64 6.1.0-*-cloud-amd64", 50},
		{deb("6.1.0-0-amd64"), "debian 12 x86_64 6.1.0-*-amd64", 0},
		{Key{Arch: "x86_64", Release: "5.4.0-150-generic", Distro: "ubuntu", Version: "20.04"}, "ubuntu 20.04 x86_64 5.4.0-*-generic", 150},
		{Key{Arch: "arm64", Release: "5.15.0-1034-azure-fde", Distro: "ubuntu", Version: "22.04"}, "ubuntu 22.04 arm64 5.15.0-*-azure-fde", 1034},
		// Releases that do not say which builds differ by patch only.
		{deb("6.12.118+deb12-amd64"), "", 0},
		{Key{Arch: "x86_64", Release: "4.18.0-477.10.1.el8_8.x86_64", Distro: "rhel", Version: "8"}, "", 0},
		{Key{Arch: "x86_64", Release: "5.10.102-99.473.amzn2.x86_64", Distro: "amzn", Version: "2"}, "", 0},
		{deb("6.1.176"), "", 0},
		{deb("6.1.0-047-amd64"), "", 0},
		{deb("6.1.0-47"), "", 0},
		{deb("6.1.0-47-"), "", 0},
		{deb("6.1.0-47-1x"), "", 0},
		{deb("6.1.0-47-amd64/x"), "", 0},
		{deb("6..1-47-amd64"), "", 0},
		{deb("6-47-amd64"), "", 0},
		{deb("6.1.0-99999999999999999999-amd64"), "", 0},
		// A family is a distribution release's.
		{Key{Arch: "x86_64", Release: "6.1.0-47-amd64"}, "", 0},
		{Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian"}, "", 0},
	} {
		f, abi, ok := FamilyOf(tc.key)
		if got := map[bool]string{true: f.String()}[ok]; got != tc.want || abi != tc.abi {
			t.Errorf("FamilyOf(%s) = %q %d, want %q %d", tc.key, got, abi, tc.want, tc.abi)
		}
		if ok && (f.Key(abi) != tc.key || !f.Valid()) {
			t.Errorf("FamilyOf(%s): Key(%d) = %s, valid %v", tc.key, abi, f.Key(abi), f.Valid())
		}
	}
	if (Family{Arch: "x86_64", Distro: "debian", Version: "12", Series: "6.1.0", Flavour: "amd64"}).Valid() {
		t.Error("a flavour without its dash is valid")
	}
}
