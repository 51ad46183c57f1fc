#!/bin/sh
# Builds the container tier's test image from the host's static busybox (Debian package
# `busybox-static`), because no registry can be reached where the tests run: one binary and its
# applet links, imported as an image. Reuses the image when the engine already has it, so a run
# costs one `image inspect` after the first. Then starts it once, confined as the adapter confines
# a run, so an engine that answers but cannot start containers is named here with its own error.
#
# Usage: build-sandbox-image.sh [podman|docker] [tag]
#   engine  default: the first of podman, docker that answers (the adapter's order)
#   tag     default: localhost/toolgate-test-sandbox:1
# Environment: TOOLGATE_BUSYBOX, the static busybox to use (default /bin/busybox).
# Prints the engine it used on stdout. Exit 3: no engine answers; 4: no static busybox;
# 5: the image cannot be built; 6: the engine cannot start a confined container.
set -eu

engine=${1:-}
tag=${2:-localhost/toolgate-test-sandbox:1}
busybox=${TOOLGATE_BUSYBOX:-/bin/busybox}

answers() {
  case "$1" in
    podman) podman info --format '{{.Version.Version}}' >/dev/null 2>&1 ;;
    docker) docker version --format '{{.Server.Version}}' >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

if [ -z "$engine" ]; then
  for candidate in podman docker; do
    if command -v "$candidate" >/dev/null 2>&1 && answers "$candidate"; then
      engine=$candidate
      break
    fi
  done
  if [ -z "$engine" ]; then
    echo "no container engine answers (tried podman, docker); install podman (apt-get install podman runc catatonit) or start a docker daemon" >&2
    exit 3
  fi
elif ! answers "$engine"; then
  echo "$engine does not answer" >&2
  exit 3
fi

if ! "$engine" image inspect --format '{{.Id}}' "$tag" >/dev/null 2>&1; then
  # A dynamically linked busybox would find no libc in the image, and every run would fail.
  if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
    echo "no static busybox at $busybox (apt-get install busybox-static)" >&2
    exit 4
  fi
  root=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-sandbox-image.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/workspace" "$root/proc" "$root/dev" "$root/sys"
  cp "$busybox" "$root/bin/busybox"
  # Every applet at its usual path (bin/sh, usr/bin/env, …), so scripts find them as on Debian.
  for applet in $("$busybox" --list-full); do
    [ -e "$root/$applet" ] && continue
    mkdir -p "$root/$(dirname "$applet")"
    ln -s /bin/busybox "$root/$applet"
  done
  printf 'root:x:0:0:root:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  chmod 1777 "$root/tmp"
  if ! output=$(tar --numeric-owner --owner=0 --group=0 -C "$root" -cf - . |
    "$engine" import --change 'CMD ["/bin/sh"]' --message 'toolgate container tier test sandbox (busybox-static)' - "$tag" 2>&1); then
    echo "$engine could not import the image $tag: $(printf '%s' "$output" | tail -n 1)" >&2
    exit 5
  fi
fi

# The adapter's confinement (container-argv.ts), minus the workspace mount: every flag here is one
# an engine can refuse on a restricted host (rlimits, cgroups, seccomp, the init binary).
if ! output=$("$engine" run --rm --pull never --network none --read-only --cap-drop ALL \
  --security-opt no-new-privileges --pids-limit 64 --memory 64m --cpus 1 --init \
  --tmpfs /tmp:rw,nosuid,nodev,size=1048576 --entrypoint=/bin/sh "$tag" -c 'echo toolgate-sandbox-ok' 2>&1) ||
  [ "$output" != toolgate-sandbox-ok ]; then
  echo "$engine answers but cannot start a confined container: $(printf '%s' "$output" | tail -n 1)" >&2
  exit 6
fi
echo "$engine"
