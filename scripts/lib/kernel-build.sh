# Shared steps of scripts/build-kernel-*.sh, which build a kernel without
# BTF for the VM field test into an output directory: lock it, skip the
# build when its outputs are there, make the bzImage, and move the outputs
# in place together. Sourced; the caller sets `name` (for messages) and
# has `set -euo pipefail`.

# kb_open DIR: creates DIR, takes its lock for the rest of the script
# (runs at once wait for each other), and exits 0 when DIR holds the
# outputs already. Sets dir to DIR's absolute path.
kb_open() {
	mkdir -p "$1"
	dir=$(cd "$1" && pwd)
	exec 9>"$dir/lock"
	flock 9
	if [[ -s $dir/vmlinuz && -s $dir/vmlinux && -s $dir/config && -s $dir/release ]]; then
		exit 0
	fi
}

# kb_fetch FILE SHA256 WHAT COMMAND...: unless FILE is there with the
# digest SHA256, says WHAT and runs COMMAND, which writes FILE (exit 3
# when it fails: the network), then checks the digest (exit 1, FILE
# removed, when it differs).
kb_fetch() {
	local file=$1 sum=$2 what=$3
	shift 3
	if echo "$sum  $file" | sha256sum -c --quiet >/dev/null 2>&1; then
		return
	fi
	echo "$name: $what" >&2
	"$@" || exit 3
	if ! echo "$sum  $file" | sha256sum -c --quiet; then
		echo "$name: $file: sha256 is not $sum" >&2
		rm -f "$file"
		exit 1
	fi
}

# kb_workdir: a temporary directory under dir, removed on exit. Sets build.
kb_workdir() {
	build=$(mktemp -d "$dir/build.XXXXXX")
	trap 'rm -rf "$build"' EXIT
}

# kb_make: make -j<cores> bzImage in the current directory, the source
# tree, timed; the log's tail on failure.
kb_make() {
	echo "$name: make bzImage ($(nproc) jobs)" >&2
	local start=$SECONDS
	make -j"$(nproc)" bzImage >"$build/make.log" 2>&1 || { tail -50 "$build/make.log" >&2; exit 1; }
	echo "$name: built in $((SECONDS - start)) s" >&2
}

# kb_install: copies release, .config, vmlinux and the bzImage of the
# current directory into dir, renaming them into place only once all are
# copied, so that a killed run leaves no half of them.
kb_install() {
	make -s kernelrelease >"$dir/release.tmp"
	cp .config "$dir/config.tmp"
	cp vmlinux "$dir/vmlinux.tmp"
	cp arch/x86/boot/bzImage "$dir/vmlinuz.tmp"
	for f in vmlinux config release vmlinuz; do mv "$dir/$f.tmp" "$dir/$f"; done
	echo "$name: $(cat "$dir/release") in $dir" >&2
}
