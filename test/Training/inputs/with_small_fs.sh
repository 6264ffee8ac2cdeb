#!/usr/bin/env bash
# usage: with_small_fs.sh SIZE DIR COMMAND...
# Mounts a tmpfs of SIZE (e.g. 3500k) at DIR, runs COMMAND, unmounts DIR
# whatever happens, and exits with COMMAND's status. A disk that fills up.
set -u
size="$1" dir="$2"
shift 2
mkdir -p "$dir"
mount -t tmpfs -o "size=$size" tmpfs "$dir" || exit 99
trap 'umount "$dir"' EXIT
"$@"
