#!/usr/bin/env bash
# Headless Chromium for the render role: Debian's chromium package (no browser download by npm).
# usage: chromium.sh install|up|down|status   (up = install: Trawl starts the browser itself, one per process)
source "$(dirname "$0")/lib.sh"
BIN="${CHROMIUM_PATH:-/usr/bin/chromium}"

install() {
  [[ -x "$BIN" ]] && return 0
  log "chromium: installing Debian package chromium"
  apt_install chromium
}

case "${1:-status}" in
  install|up) install ;;
  down) ;; # nothing runs between pages: each Trawl process starts and stops its own browser
  status) if [[ -x "$BIN" ]]; then log "chromium: $("$BIN" --version 2>/dev/null | head -1)"; else log "chromium: not installed ($BIN)"; fi ;;
  *) echo "usage: chromium.sh install|up|down|status" >&2; exit 2 ;;
esac
