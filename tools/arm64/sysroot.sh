#!/usr/bin/env bash
# sysroot.sh DIR — the arm64 libraries `make test-arm64` links with (cmocka, hwloc, and
# libbpf/libelf/zlib for the recorder), unpacked from Debian's arm64 packages into DIR.
#
# Why not `dpkg --add-architecture arm64`: that changes the host's package manager for
# everyone; here apt runs with a private state directory that knows only arm64 and the
# host's own Debian mirror, downloads the few packages, and dpkg-deb unpacks them.
# Installs the cross compiler and qemu-user-static from Debian first (root only).
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:?usage: sysroot.sh DIR}
PKGS=(libcmocka0 libcmocka-dev libhwloc15 libhwloc-dev libudev1
      libbpf1 libbpf-dev libelf1 libelf-dev zlib1g zlib1g-dev systemtap-sdt-dev
      libjson-c5 libjson-c-dev)
TOOLS=(qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross)

say() { echo "test-arm64: $*" >&2; }

bash tools/deps.sh "${TOOLS[@]}"

# The package list is the stamp: the sysroot is made again only when it changes.
stamp="$DIR/.packages"
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "${PKGS[*]}" ] && exit 0

apt_dir="$DIR.apt"
rm -rf "$DIR" "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$apt_dir/empty" "$DIR"
: > "$apt_dir/status"
echo "deb [arch=arm64] $(bash tools/debian_mirror.sh) bookworm main" > "$apt_dir/sources.list"
APT=(apt-get -q -o "APT::Architecture=arm64" -o "APT::Architectures::=arm64"
     -o "Dir::State=$PWD/$apt_dir" -o "Dir::State::Lists=$PWD/$apt_dir/lists"
     -o "Dir::State::status=$PWD/$apt_dir/status" -o "Dir::Cache=$PWD/$apt_dir/cache"
     -o "Dir::Etc::SourceList=$PWD/$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$PWD/$apt_dir/empty"
     -o "Dir::Etc::Preferences=$PWD/$apt_dir/empty/none" -o "Dir::Etc::PreferencesParts=$PWD/$apt_dir/empty"
     -o "APT::Sandbox::User=root")
say "downloading arm64 ${PKGS[*]}"
"${APT[@]}" update >"$apt_dir/update.log" 2>&1 || { tail -3 "$apt_dir/update.log" >&2; exit 1; }
(cd "$apt_dir/debs" && "${APT[@]}" download "${PKGS[@]/%/:arm64}" >/dev/null)
for deb in "$apt_dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$DIR"
done
# Some -dev links are absolute (libz.so -> /lib/...): point them into DIR.
find "$DIR" -type l -lname '/*' | while read -r l; do ln -sfnr "$DIR$(readlink "$l")" "$l"; done
rm -rf "$apt_dir"
echo "${PKGS[*]}" > "$stamp"
