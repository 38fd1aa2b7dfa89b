#!/usr/bin/env bash
# Builds the platform's image from this working tree on this machine kind (podman, no registry: a local stand-in for
# the Node base image, ../shared/notes/containers.md) and tags it localhost/mediaplane:test. The container tests run it
# (test/helpers/containers.ts), and .ci/run starts it in the background first, so that podman's installation and the
# image's downloads overlap the install, the checks and the other tests. One build at a time: a second caller waits for
# the first and then finds every layer cached.
# Exit 3: podman or the base image cannot be had here (the container tests then say why and are skipped).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-/tmp/mediaplane-containers.conf}
exec 9>/tmp/mediaplane-image.lock
flock 9
script=
for dir in "$root/../shared" "$root/../../shared" /work/shared; do
  [ -f "$dir/tools/container-base.sh" ] && { script=$dir/tools/container-base.sh; break; }
done
[ -n "$script" ] || { echo 'container-base.sh (../shared/tools) is not on this machine' >&2; exit 3; }
# container-base.sh installs podman, runc and debootstrap when missing; installed here first, waiting for the package
# lock that CI's other installations (scripts/ensure-system-deps.sh) may hold meanwhile.
need=()
for p in podman runc debootstrap; do command -v "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null &&
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null; } || { echo "cannot install ${need[*]}" >&2; exit 3; }
fi
base=$(bash "$script" | tail -n 1) || { echo 'podman or the base image cannot be had here' >&2; exit 3; }
started=$(date +%s)
podman --runtime runc build --format docker --network host --build-arg "NODE_IMAGE=$base" \
  -t localhost/mediaplane:test -f "$root/Containerfile" "$root" || exit 1
echo "container image built in $(($(date +%s) - started)) s"
