#!/usr/bin/env bash
# Calibration end to end on rendered 1080p scenes, from images only:
#   simulate -> calibrate camera (ChArUco views) -> calibrate table (frame) -> score vs truth.
# Usage: scripts/calibration-e2e.sh [SEED ...]   (default: seeds 1 2 3 4 5 6 11 21)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release --features vision
bin=target/release/hashmark
out=$(mktemp -d)
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5 6 11 21)
for seed in "${seeds[@]}"; do
  d=$out/s$seed
  mkdir -p "$d/cal"
  $bin simulate --seed "$seed" --out "$d/sim" --charuco-views 12 >/dev/null 2>&1
  $bin calibrate camera --images "$d/sim" --out "$d/cal/camera.json" >"$d/camera.txt"
  $bin calibrate table --camera-calibration "$d/cal/camera.json" --image "$d/sim/frame.jpg" --out "$d/cal/table.json" >"$d/table.txt"
  echo "seed $seed: $($bin calibrate score --truth "$d/sim/truth.json" --camera-calibration "$d/cal/camera.json" --table "$d/cal/table.json" | tr '\n' ' ')"
done
echo "files in $out"
