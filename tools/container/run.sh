#!/usr/bin/env bash
# run.sh — `make container-test`: builds (or reuses) a Debian bookworm image with the
# packages of `make deps`, runs .ci/run in it privileged and exits with its status.
#
#   CONTAINER=podman (default) or docker; run.sh --probe says whether it can run here.
#
# Why the podman settings: on some hosts (a VM without CAP_SYS_RESOURCE, a hybrid
# cgroup tree) crun cannot start a container ("setrlimit RLIMIT_NPROC: Operation not
# permitted", then "cgroups in hybrid mode not supported") while runc with cgroupfs
# can. They live in a containers.conf of our own (CONTAINERS_CONF), not in the user's.
# Why debootstrap: where no image registry answers, the base image is made locally
# from the apt mirror the host already uses.
set -euo pipefail
cd "$(dirname "$0")/../.."
ENGINE=${CONTAINER:-podman}
WORK=build/container
BASE_PULL=docker.io/library/debian:bookworm
BASE_LOCAL=localhost/taskhop-base:bookworm

say() { echo "container-test: $*" >&2; }

case "$ENGINE" in
podman | docker) ;;
*) say "CONTAINER must be podman or docker, not '$ENGINE'"; exit 2 ;;
esac

podman_conf() {
	mkdir -p "$WORK"
	printf '%s\n' '# written by tools/container/run.sh; see there why' \
		'[containers]' 'default_ulimits = []' \
		'[engine]' 'runtime = "runc"' 'cgroup_manager = "cgroupfs"' > "$WORK/containers.conf"
	export CONTAINERS_CONF=$PWD/$WORK/containers.conf
}

# Prints why the engine cannot run here and fails, or succeeds silently.
probe() {
	if [ "$ENGINE" = podman ]; then
		command -v podman >/dev/null || command -v apt-get >/dev/null ||
			{ echo "podman is not installed and apt-get is missing"; return 1; }
		[ "$(id -u)" -eq 0 ] || { echo "a privileged container needs root (uid $(id -u))"; return 1; }
		# podman, runc and debootstrap from Debian when they are missing
		bash tools/deps.sh podman runc debootstrap >&2 || { echo "could not install podman runc debootstrap"; return 1; }
		podman_conf
	fi
	command -v "$ENGINE" >/dev/null || { echo "$ENGINE is not installed"; return 1; }
	local err
	err=$("$ENGINE" info 2>&1 >/dev/null) || { echo "'$ENGINE info' fails: ${err##*$'\n'}"; return 1; }
}

image_exists() {
	if [ "$ENGINE" = podman ]; then podman image exists "$1"; else docker image inspect "$1" >/dev/null 2>&1; fi
}

# debian:bookworm from a registry when one answers, else debootstrap into a directory
# and import it. Prints the base image's name.
base_image() {
	image_exists "$BASE_PULL" && { echo "$BASE_PULL"; return; }
	image_exists "$BASE_LOCAL" && { echo "$BASE_LOCAL"; return; }
	if timeout 90 "$ENGINE" pull -q "$BASE_PULL" >/dev/null 2>&1; then
		echo "$BASE_PULL"
		return
	fi
	command -v debootstrap >/dev/null || { say "no registry answers and debootstrap is not installed"; exit 1; }
	local mirror root=$WORK/rootfs
	mirror=$(bash tools/debian_mirror.sh)
	say "no registry answers: debootstrap --variant=minbase bookworm from $mirror (about a minute)"
	rm -rf "$root"
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
		{ tail -5 "$WORK/debootstrap.log" >&2; say "debootstrap failed (log: $WORK/debootstrap.log)"; exit 1; }
	tar -C "$root" -c . | "$ENGINE" import - "$BASE_LOCAL" >/dev/null
	rm -rf "$root"
	echo "$BASE_LOCAL"
}

# The image is named after what goes into it, so an unchanged Containerfile and package
# list reuse the image of the last run (a second run builds nothing).
ci_image() {
	local tag ctx=$WORK/context base
	tag=localhost/taskhop-ci:$(cat Containerfile tools/deps.sh | sha256sum | cut -c1-16)
	if image_exists "$tag"; then
		echo "$tag"
		return
	fi
	base=$(base_image)
	rm -rf "$ctx" && mkdir -p "$ctx/tools"
	cp Containerfile "$ctx/" && cp tools/deps.sh "$ctx/tools/"
	say "building $tag from $base"
	"$ENGINE" build -q --network host --build-arg "BASE=$base" -t "$tag" -f "$ctx/Containerfile" "$ctx" >/dev/null
	echo "$tag"
}

if [ "${1:-}" = --probe ]; then
	why=$(probe) || { echo "$why"; exit 1; }
	exit 0
fi
why=$(probe) || { say "$ENGINE cannot run containers here: $why"; exit 1; }
[ "$ENGINE" = podman ] && podman_conf
image=$(ci_image)
# --privileged: BPF, perf events and uprobes (see README "In a container / in CI");
# its own build directory, so the host's objects are never mixed with the container's.
say "running .ci/run in $image"
rc=0
"$ENGINE" run --rm --privileged --network host -v "$PWD:/src" -w /src \
	-e B=build-container -e TASKHOP_IN_CONTAINER=1 "$image" bash .ci/run || rc=$?
say "exit status $rc"
exit "$rc"
