#!/usr/bin/env bash
# qjs-native.sh builds the native QuickJS-NG reference of compute_loop
# (issue #36) for make bench: bench/native/qjsbench.c (ours: evaluates one
# script N times, timing each JS_Eval) linked with the engine of the same
# pinned qjs-src package guest/build.sh fetches and verifies, as released
# (none of the guest's patches), compiled natively with the host compiler
# at -O3 twice:
#   bin/qjs-native-switch  DIRECT_DISPATCH 0: a switch over the opcodes,
#                          the only dispatch WebAssembly can express;
#   bin/qjs-native-goto    DIRECT_DISPATCH 1: computed goto (QuickJS-NG's
#                          default on gcc and clang).
# It downloads nothing: it takes the .deb guest/build.sh cached under
# guest/build/deb (running guest/build.sh first when there is none, which
# fetches it with its pinned checksum) and checks that checksum again.
# Environment: NATIVE_CC (default: clang, else gcc); QJS_DEB, a qjs-src .deb to
# take instead of guest/build's (checked against the same pinned checksums).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cc=${NATIVE_CC:-}
if [ -z "$cc" ]; then
	if command -v clang >/dev/null 2>&1; then cc=clang; else cc=gcc; fi
fi

# The known-good packages, "version sha256", as guest/build.sh pins them.
mapfile -t known < <(sed -n '/^known=(/,/^)/p' guest/build.sh | grep -oE '"[^"]+ [0-9a-f]{64}"' | tr -d '"')
[ ${#known[@]} -gt 0 ] || { echo "qjs-native: no pinned qjs-src found in guest/build.sh" >&2; exit 1; }

find_deb() {
	local entry version sum deb
	for entry in "${known[@]}"; do
		version=${entry%% *}
		sum=${entry##* }
		deb=${QJS_DEB:-guest/build/deb/qjs-src_${version}_all.deb}
		if [ -f "$deb" ] && [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sum" ]; then
			echo "$deb $version"
			return 0
		fi
	done
	return 1
}
if ! found=$(find_deb); then
	[ -z "${QJS_DEB:-}" ] || { echo "qjs-native: QJS_DEB=$QJS_DEB is not a pinned qjs-src (checksum)" >&2; exit 1; }
	guest/build.sh >&2
	found=$(find_deb) || { echo "qjs-native: guest/build.sh cached no verified qjs-src under guest/build/deb" >&2; exit 1; }
fi
deb=${found%% *}
version=${found##* }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/pkg"
src="$tmp/pkg/usr/src/quickjs-ng"
grep -q '^#define DIRECT_DISPATCH  1$' "$src/quickjs.c" || {
	echo "qjs-native: qjs-src $version's quickjs.c does not choose DIRECT_DISPATCH as expected" >&2
	exit 1
}
mkdir -p bin
for kind in goto switch; do
	mkdir -p "$tmp/$kind"
	cp "$src"/*.c "$src"/*.h "$tmp/$kind/"
	if [ "$kind" = switch ]; then
		sed -i 's/^#define DIRECT_DISPATCH  1$/#define DIRECT_DISPATCH  0/' "$tmp/$kind/quickjs.c"
	fi
	echo "qjs-native: building bin/qjs-native-$kind (qjs-src $version, $cc -O3)" >&2
	"$cc" -O3 -w -I"$tmp/$kind" -o "bin/qjs-native-$kind" bench/native/qjsbench.c \
		"$tmp/$kind/quickjs.c" "$tmp/$kind/libregexp.c" "$tmp/$kind/libunicode.c" "$tmp/$kind/dtoa.c" -lm -lpthread
done
