#!/usr/bin/env bash
# Detection accuracy report on a fixed set of rendered scenes, through calibration from
# images only: simulate -> calibrate camera (ChArUco views) -> calibrate table -> detect,
# scored against the truth by `hashmark bench detect`.
# Usage: scripts/detect-report.sh [OUT_DIR]   (default /tmp/hashmark-detect-report; scenes
# already rendered there are reused)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release
bin=$PWD/target/release/hashmark
out=${1:-/tmp/hashmark-detect-report}
# Seeds chosen once: 12 scenes at 1080p, 4 at 4K.
hd=(1 2 3 4 5 6 7 8 9 10 11 21)
uhd=(31 32 33 34)
make_scene() { # dir seed resolution
  local d=$1 seed=$2 res=$3
  [ -f "$d/cal/table.json" ] && return
  mkdir -p "$d/cal"
  $bin simulate --seed "$seed" --resolution "$res" --out "$d/sim" --charuco-views 12 >/dev/null
  $bin calibrate camera --images "$d/sim" --out "$d/cal/camera.json" >"$d/camera.txt"
  $bin calibrate table --camera-calibration "$d/cal/camera.json" --image "$d/sim/frame.jpg" \
    --out "$d/cal/table.json" >"$d/table.txt"
}
for s in "${hd[@]}"; do make_scene "$out/1080p/s$s" "$s" 1080p; done
for s in "${uhd[@]}"; do make_scene "$out/4k/s$s" "$s" 4k; done
echo "== 1080p, without the empty-table frame"
$bin bench detect "$out"/1080p/s*
echo "== 1080p, with the empty-table frame"
$bin bench detect --background "$out"/1080p/s*
echo "== 4K, without the empty-table frame"
$bin bench detect "$out"/4k/s*
