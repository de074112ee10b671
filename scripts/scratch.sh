#!/usr/bin/env bash
# A journaled scratch file system for servers' data and temporary files, used by .ci/run and `npm run bench`.
# usage: scratch.sh up     prints the scratch directory (its file system mounted at <dir>/mnt), or nothing when none
#                          is needed or possible
#        scratch.sh down DIR  unmounts and deletes what `up` made
# On an ext4 without a journal (the root file system of this project's build machines) ext4 skips, one by one, every
# inode of a group freed in the last 60 s, or 360 s while its block is dirty (recently_deleted): a ClickHouse started
# within minutes of another's deletion of its part files spent half its CPU there (bench/README.md, issue 34, third
# session). So when TMPDIR is such a file system and this runs as root, `up` makes a sparse ext4 image with a journal,
# loop-mounted with discard (deleted files give their blocks back), as a production volume has. Elsewhere (a journal,
# not root, no loop devices) it prints nothing and the caller uses TMPDIR as it is.
set -uo pipefail
case "${1:-}" in
  up)
    tmp="${TMPDIR:-/tmp}"
    [[ $(id -u) == 0 ]] || exit 0
    read -r majmin fstype < <(findmnt -n -o MAJ:MIN,FSTYPE --target "$tmp") || exit 0
    [[ "$fstype" == ext4 && -e "/sys/dev/block/$majmin" ]] || exit 0
    # the kernel's name of the device (vda, dm-0, nvme0n1p2) names its journal in /proc/fs/jbd2 (<name>-8)
    dev=$(basename "$(readlink -f "/sys/dev/block/$majmin")")
    [[ -e "/proc/fs/jbd2/$dev-8" ]] && exit 0
    dir=$(mktemp -d "$tmp/trawl-scratch-XXXXXX") || exit 0
    mkdir "$dir/mnt"
    if ! { truncate -s 64G "$dir/image.ext4" && mkfs.ext4 -q -F "$dir/image.ext4" && mount -o loop,discard "$dir/image.ext4" "$dir/mnt"; }; then
      echo "scratch: the loop mount failed; $tmp is used as it is" >&2
      rm -rf "$dir"
      exit 0
    fi
    echo "$dir" ;;
  down)
    dir="${2:?usage: scratch.sh down DIR}"
    umount "$dir/mnt" 2>/dev/null || umount -l "$dir/mnt" || { echo "scratch: could not unmount $dir/mnt" >&2; exit 1; }
    rm -rf "$dir" ;;
  *) echo "usage: scratch.sh up | down DIR" >&2; exit 2 ;;
esac
