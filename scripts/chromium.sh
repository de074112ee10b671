#!/usr/bin/env bash
# Headless Chromium for the render role: Debian's chromium package (no browser download by npm), and the ad and
# tracker lists of blockAds (EasyList, EasyPrivacy) from Debian's webext-ublock-origin-chromium (BLOCK_ADS_LISTS).
# usage: chromium.sh install|up|down|status   (up = install: Trawl starts the browser itself, one per process)
source "$(dirname "$0")/lib.sh"
BIN="${CHROMIUM_PATH:-/usr/bin/chromium}"

LISTS=/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist/easylist.txt

install() {
  if [[ ! -x "$BIN" ]]; then
    log "chromium: installing Debian package chromium"
    apt_install chromium
  fi
  if [[ ! -f "$LISTS" ]]; then
    log "chromium: installing Debian package webext-ublock-origin-chromium (blockAds lists)"
    apt_install webext-ublock-origin-chromium
  fi
}

case "${1:-status}" in
  install|up) install ;;
  down) ;; # nothing runs between pages: each Trawl process starts and stops its own browser
  status) if [[ -x "$BIN" ]]; then log "chromium: $("$BIN" --version 2>/dev/null | head -1)"; else log "chromium: not installed ($BIN)"; fi ;;
  *) echo "usage: chromium.sh install|up|down|status" >&2; exit 2 ;;
esac
