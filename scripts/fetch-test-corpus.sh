#!/usr/bin/env bash
# Fetches the shared test corpus, the files tests read from
# $BTFEMBED_CORPUS (.ci/run uses ../shared/corpus), from Debian's archive
# with apt-get download, for a clone that has no ../shared beside it:
#   images/vmlinuz-<release>   the kernel images of four Debian 12 packages
#   packages/<the .deb>        one whole linux-image package
#   modules/<arch>/<release>/  a few modules with split BTF
# Every file is checked against the digest of the shared corpus's copy.
# Not fetched, as no test reads them: btfhub/ (tests read testdata/btfhub),
# the Debian 11 image (bullseye), and nobtf/ (a kernel built here from
# linux-source-6.1; its recipe is in the shared corpus's README.md).
#
# Usage: scripts/fetch-test-corpus.sh DIR
#        BTFEMBED_CORPUS=DIR go test -count=1 ./...
# Needs apt-get and dpkg-deb (Debian or Ubuntu) and about 500 MB of
# downloads. apt's package lists for arm64 are kept in a temporary
# directory, so the system's apt configuration is not changed.
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# package:debian-arch=version, release, uname arch, modules to keep
kernels=(
	"linux-image-6.1.0-47-amd64-unsigned:amd64=6.1.170-3 6.1.0-47-amd64 x86_64"
	"linux-image-6.1.0-50-cloud-amd64-unsigned:amd64=6.1.176-1 6.1.0-50-cloud-amd64 x86_64"
	"linux-image-6.12.118+deb12-amd64-unsigned:amd64=6.12.118-1~deb12u1 6.12.118+deb12-amd64 x86_64 bridge ext4 kvm kvm-intel nf_conntrack nvme virtio_net xfs"
	"linux-image-6.1.0-57-arm64-unsigned:arm64=6.1.192-3 6.1.0-57-arm64 arm64 bridge ext4 nf_conntrack nvme virtio_net"
)
keepdeb=linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb

# A private apt state that also knows arm64 packages.
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
apt=(-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
	-o "APT::Architectures::=amd64" -o "APT::Architectures::=arm64"
	-o "APT::Sandbox::User=$(id -un)")
echo "fetch-test-corpus: reading Debian's package lists (amd64, arm64)" >&2
apt-get "${apt[@]}" update -qq

mkdir -p "$dir/images" "$dir/packages"
for k in "${kernels[@]}"; do
	read -r pkgspec release arch mods <<<"$k"
	pkg=${pkgspec%%:*}
	echo "fetch-test-corpus: $pkgspec" >&2
	(cd "$tmp" && apt-get "${apt[@]}" download -qq "$pkgspec")
	deb=$(ls "$tmp"/"${pkg}"_*.deb)
	x="$tmp/x-$release"
	mkdir -p "$x"
	dpkg-deb -x "$deb" "$x"
	cp "$x/boot/vmlinuz-$release" "$dir/images/"
	if [ -n "$mods" ]; then
		mkdir -p "$dir/modules/$arch/$release"
		for m in $mods; do
			f=$(find "$x" -path "*/modules/$release/*" \( -name "$m.ko" -o -name "$m.ko.xz" \) | head -n1)
			[ -n "$f" ] || { echo "fetch-test-corpus: $deb has no module $m" >&2; exit 1; }
			cp "$f" "$dir/modules/$arch/$release/"
		done
	fi
	if [ "$(basename "$deb")" = "$keepdeb" ]; then
		cp "$deb" "$dir/packages/"
	fi
	rm -rf "$x" "$deb"
done

echo "fetch-test-corpus: checking digests" >&2
(cd "$dir" && sha256sum --quiet -c) <<'SUMS'
aae27b9d21ab3114347e05ac1439b1f4cccd819c4384831d79ba377642f4b8cb  images/vmlinuz-6.1.0-47-amd64
592f2dedf84a5215c687d2d4ba5cbfb5a630ff72e074c28abf605cc4fd20f210  images/vmlinuz-6.1.0-50-cloud-amd64
eeb46eccb6193f3829acd216b68549ad8527558cd60976218eb9b49ceed32283  images/vmlinuz-6.1.0-57-arm64
a3a6fa50e046442753875145efda7185abfce5f5a71dc0a8c285cdadb172cfb8  images/vmlinuz-6.12.118+deb12-amd64
4f217f710203cdfedde21f836bc66a0a4d773752d7fe8e5e13f701f891788945  packages/linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb
548612c54a4034d129f079c596cd3594f8fd63bcb2f7768bce4bd35a1349b700  modules/arm64/6.1.0-57-arm64/bridge.ko
32b228a6327c0629029e342c73d8a6de5746b9f9f28d824cc30cd530681423d4  modules/arm64/6.1.0-57-arm64/ext4.ko
21a92049a61a1056861a626d9637b10681cd84c05aef909bedb9589c5fe49ec6  modules/arm64/6.1.0-57-arm64/nf_conntrack.ko
331db609e3906bb93264e4390d228d9e0593097aacea4e5a810d4bd57d143427  modules/arm64/6.1.0-57-arm64/nvme.ko
94cdc58aaf75b60aa72d4c0bb4535393c5e07fc0340298320b28833f315d36c9  modules/arm64/6.1.0-57-arm64/virtio_net.ko
b4a3034de852cac2bdd1c2ed00f021657a03dbbcb416e5de13d4b0e3449c41ca  modules/x86_64/6.12.118+deb12-amd64/bridge.ko.xz
9e770278b6b9358d60cd05aa0099ea096895d9822f4052b8a73efe36b581c812  modules/x86_64/6.12.118+deb12-amd64/ext4.ko.xz
ee625e5f87c98eb382a1aea923196db287a2fdde710084ec5ed9b7761f37790e  modules/x86_64/6.12.118+deb12-amd64/kvm-intel.ko.xz
b83cf4d4cea6bd14850cfcd43d9bac8fcd0017fbec58ada23668033a51334ead  modules/x86_64/6.12.118+deb12-amd64/kvm.ko.xz
ec4b20f9c5a9400aa9b81ec5868a1ad25fbdef08004f119630945ce3d4254111  modules/x86_64/6.12.118+deb12-amd64/nf_conntrack.ko.xz
3d1d57d6c54e8117eb0989e17b8dc9b4a4e389ebe8a74dd30b953935e1b4bbd2  modules/x86_64/6.12.118+deb12-amd64/nvme.ko.xz
62fabef33ef93cbc6acec235182532134ff9b3779efd8f2282bf0a66710ad59d  modules/x86_64/6.12.118+deb12-amd64/virtio_net.ko.xz
67ca5ccf7cf7ca75bbf25753909931cfe9f05d55abb3646be5350d755df02b38  modules/x86_64/6.12.118+deb12-amd64/xfs.ko.xz
SUMS
echo "fetch-test-corpus: done; run the tests with BTFEMBED_CORPUS=$dir" >&2
