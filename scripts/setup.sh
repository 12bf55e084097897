#!/usr/bin/env bash
# Installs the system packages hashmark builds against, when they are missing.
# Idempotent and quiet when everything is there; used by README's commands and .ci/run.
set -euo pipefail

# OpenCV with contrib (aruco) and clang for its bindings; fonts for the printable markers;
# X, Mesa and Xvfb for the overlay window and its screenshot test.
packages=(pkg-config clang libclang-dev libopencv-dev libopencv-contrib-dev fonts-dejavu-core
  xvfb xauth libgl1-mesa-dri libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and re-run" >&2
  exit 1
fi
