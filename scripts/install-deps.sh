#!/usr/bin/env bash
# install-deps.sh installs the Debian toolchain that builds the guest
# (guest/build.sh): clang, lld, the WASI libc and the wasm32 compiler runtime,
# and patch, which applies our patches to the QuickJS-NG and CPython sources;
# curl, which the demo's ptcx serve section uses as the client; and gcc, the C
# compiler cgo links the wasmtime engine with (make test-wasmtime, make bench).
# Given package names, it installs those instead (make test-image: podman
# and runc). It does nothing when they are all installed; otherwise it runs
# `apt-get update` and `apt-get install -y` (as root, or through sudo).
set -euo pipefail

packages=(clang lld wasi-libc libclang-rt-dev-wasm32 curl gcc patch)
[ $# -gt 0 ] && packages=("$@")

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
	echo "install-deps: missing ${missing[*]}, and apt-get is not available: install them by hand" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "install-deps: missing ${missing[*]}: run as root or install sudo" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q "${missing[@]}"
