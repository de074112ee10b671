#!/usr/bin/env bash
# Local S3-compatible server for the web-archive upload tests (WARC_S3_URL): SeaweedFS (Apache-2.0), built from its Go
# module (the Go module proxy) with the machine's Go; one process (`weed server -s3`: master, volume, filer and S3
# gateway), data under .infra/seaweedfs. Why SeaweedFS: permissively licensed, a Go module (MinIO is AGPL, Ceph and
# Garage are not in these registries), one binary. `go install …@version` refuses it (its go.mod has a replace
# directive), so the module is downloaded and built in place.
# The build (~10 min on a busy 2-core machine) is done once per machine: the binary is kept outside TRAWL_INFRA_DIR,
# in TRAWL_SEAWEEDFS_BIN_DIR (~/.cache/trawl/seaweedfs-<version>), beside Go's own module and build caches.
# usage: seaweedfs.sh install|up|down|status|vars   (vars: the WARC_S3_ENDPOINT and AWS_* variables to reach it)
# Ports: TRAWL_S3_PORT (S3 API, 18333), and TRAWL_S3_PORT + 1..3 for its master, volume and filer; their gRPC ports
# (and the S3 API's) are each + 10000; all outside 18080-18089. Credentials of the test identity: TRAWL_S3_ACCESS_KEY / TRAWL_S3_SECRET_KEY
# (trawl-test / trawl-test-secret). `up` prints how long the start took.
source "$(dirname "$0")/lib.sh"
SDIR="$INFRA_DIR/seaweedfs"
HOST=127.0.0.1
PORT="${TRAWL_S3_PORT:-18333}"
MASTER_PORT=$((PORT + 1)) VOLUME_PORT=$((PORT + 2)) FILER_PORT=$((PORT + 3))
ACCESS_KEY="${TRAWL_S3_ACCESS_KEY:-trawl-test}"
SECRET_KEY="${TRAWL_S3_SECRET_KEY:-trawl-test-secret}"
PIDFILE="$SDIR/weed.pid"
VERSION=v0.0.0-20261109003541-7506e5f91cd6
BIN_DIR="${TRAWL_SEAWEEDFS_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trawl/seaweedfs-$VERSION}"
WEED="$BIN_DIR/weed"

# go: the machine's Go (1.26 or later: the module's go.mod asks for 1.26.6)
need_go() {
  if command -v go >/dev/null; then return 0; fi
  if [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; return 0; fi
  log "seaweedfs: needs Go 1.26 or later on PATH (Debian 12's golang package is too old)"; return 1
}

install() {
  if [[ -x "$WEED" ]]; then return 0; fi
  need_go
  mkdir -p "$BIN_DIR"
  local started=$SECONDS dir
  log "seaweedfs: building weed $VERSION from the Go module (once per machine; minutes)"
  dir=$(go mod download -json "github.com/seaweedfs/seaweedfs@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$dir" && -d "$dir/weed" ]] || { log "seaweedfs: module download failed"; return 1; }
  (cd "$dir" && GOFLAGS=-buildvcs=false go build -o "$WEED.tmp" ./weed) >"$BIN_DIR/build.log" 2>&1 \
    || { tail -n 30 "$BIN_DIR/build.log" >&2; log "seaweedfs: build failed"; return 1; }
  mv "$WEED.tmp" "$WEED"
  log "seaweedfs: built in $((SECONDS - started)) s ($WEED)"
}

configure() {
  mkdir -p "$SDIR/data" "$SDIR/logs"
  cat >"$SDIR/s3.json" <<JSON
{"identities": [{"name": "trawl-test", "credentials": [{"accessKey": "$ACCESS_KEY", "secretKey": "$SECRET_KEY"}], "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
JSON
}

up() {
  # one `up` at a time per TRAWL_INFRA_DIR: two test runs starting together (their global setups) would otherwise both
  # start a server, the second crash on the busy ports and its pid overwrite the first's
  mkdir -p "$SDIR"
  exec 8>>"$SDIR/up.lock"
  flock 8
  if pid_alive "$PIDFILE"; then log "seaweedfs: already running on $HOST:$PORT"; return 0; fi
  if port_busy "$HOST" "$PORT"; then adopt_or_refuse seaweedfs "$HOST:$PORT" TRAWL_S3_PORT s3_ready; return; fi
  local p
  for p in "$MASTER_PORT" "$VOLUME_PORT" "$FILER_PORT" $((PORT + 10000)) $((MASTER_PORT + 10000)) $((VOLUME_PORT + 10000)) $((FILER_PORT + 10000)); do
    need_free seaweedfs "$HOST" "$p" TRAWL_S3_PORT || return 1
  done
  install
  # a fresh store at each start: the tests make buckets of their own, and a start over an earlier store waited ~30 s
  # (the filer's membership window) against ~11 s
  rm -rf "$SDIR/data"
  configure
  local started=$SECONDS
  log "seaweedfs: starting on $HOST:$PORT"
  # small volumes (the tests' archives are kilobytes to megabytes), on loopback only
  nohup "$WEED" -logdir="$SDIR/logs" server -ip="$HOST" -ip.bind="$HOST" -dir="$SDIR/data" \
    -master.port="$MASTER_PORT" -master.volumeSizeLimitMB=64 -volume.port="$VOLUME_PORT" -volume.max=100 \
    -filer.port="$FILER_PORT" -s3 -s3.port="$PORT" -s3.config="$SDIR/s3.json" >"$SDIR/logs/stdout.log" 2>&1 8>&- &
  echo $! >"$PIDFILE"
  wait_ready seaweedfs "$PIDFILE" s3_ready "$SDIR/logs/stdout.log" || return 1
  log "seaweedfs: started in $((SECONDS - started)) s (S3 API ready to store an object)"
}

# Ready when an object can be stored and read back with the test identity's signature (the volume server has joined
# the master, the filer and the S3 gateway answer): a bucket of its own, made once.
s3_ready() {
  # curl 7.88 signs a request body wrongly for S3 (SignatureDoesNotMatch): the payload is declared unsigned
  local base="http://$HOST:$PORT/trawl-infra-ready" sig=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS_KEY:$SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
  curl -sf -m 5 "${sig[@]}" -X PUT "$base" >/dev/null 2>&1 || curl -sf -m 5 "${sig[@]}" "$base?max-keys=1" >/dev/null 2>&1 || return 1
  curl -sf -m 5 "${sig[@]}" -X PUT --data-binary ready "$base/ready" >/dev/null 2>&1 || return 1
  [[ "$(curl -sf -m 5 "${sig[@]}" "$base/ready" 2>/dev/null)" == ready ]]
}

down() { stop_pid "$PIDFILE" seaweedfs; }
status() { print_role seaweedfs "S3-compatible object store" "$PIDFILE" "http://$HOST:$PORT"; }
# the variables a Trawl process and the tests use to reach it
vars() {
  echo "WARC_S3_ENDPOINT=http://$HOST:$PORT"
  echo "AWS_ACCESS_KEY_ID=$ACCESS_KEY"
  echo "AWS_SECRET_ACCESS_KEY=$SECRET_KEY"
}

"${1:-status}"
