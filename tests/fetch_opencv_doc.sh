#!/usr/bin/env bash
# Fetch Debian's opencv-doc package (OpenCV's sample videos and photos, made by nobody on this project)
# into .cache/opencv-doc/ for the tests that read real media. Never committed; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.cache/opencv-doc
marker="$dest/usr/share/doc/opencv-doc/examples/data/vtest.avi"
[ -f "$marker" ] && exit 0
mkdir -p "$dest" .cache/deb
# Several pytest-xdist workers may call this at once: one fetches, the others wait and then find the marker.
exec 9>.cache/opencv-doc.lock
flock 9
[ -f "$marker" ] && exit 0
cd .cache/deb
if ! ls opencv-doc_*.deb >/dev/null 2>&1; then
  apt-get download opencv-doc >/dev/null 2>&1 || { apt-get update -qq && apt-get download opencv-doc; }
fi
dpkg -x opencv-doc_*.deb ../opencv-doc
cd ../opencv-doc/usr/share/doc/opencv-doc/opencv4/html
for f in box.mp4.gz cup.mp4.gz; do [ -f "$f" ] && gunzip -kf "$f"; done
test -f "../../examples/data/vtest.avi"
