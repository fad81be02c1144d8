#!/usr/bin/env bash
# Files one device call's records as evidence: docs/runs/DATE/callNN-name/ (or a single file
# docs/runs/DATE/callNN-name.txt) becomes docs/runs/DATE/callNN-name.tar.xz, members relative to the
# call folder. Members that were gzipped (x.gz, x.tgz, x.tar.gz) are stored decompressed (x, x.tar,
# x.tar): xz over the whole call compresses the near-identical JSON of one call 3-5x better than
# gzip file by file. The archive is deterministic (sorted names, fixed owner and time), so the same
# records always make the same bytes. Cite a member as docs/runs/DATE/callNN-name.tar.xz:member.
#   scripts/lib/archive_run.sh docs/runs/DATE/callNN-name[/|.txt] [more...]
# The source is left in place; remove it (git rm -r) once the archive is checked.
set -euo pipefail
for src in "$@"; do
  src=${src%/}
  name=$(basename "$src"); name=${name%.*}; [ -d "$src" ] && name=$(basename "$src")
  out="$(dirname "$src")/$name.tar.xz"
  stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
  if [ -d "$src" ]; then cp -a "$src/." "$stage/"; else cp -a "$src" "$stage/"; fi
  while IFS= read -r -d '' gz; do
    case $gz in
      *.tgz) gzip -dc "$gz" > "${gz%.tgz}.tar" ;;
      *) gzip -dc "$gz" > "${gz%.gz}" ;;
    esac
    rm -f "$gz"
  done < <(find "$stage" -type f \( -name '*.gz' -o -name '*.tgz' \) -print0)
  (cd "$stage" && find . -mindepth 1 -printf '%P\0' | LC_ALL=C sort -z |
    XZ_OPT=-9 tar --sort=name --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' \
      --mtime='2026-12-05 00:00Z' --format=gnu --null --no-recursion -cJf - -T -) > "$out"
  rm -rf "$stage"; trap - EXIT
  echo "$out $(stat -c %s "$out")"
done
