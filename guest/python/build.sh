#!/usr/bin/env bash
# build.sh builds the Python guest: CPython 3.13 for wasm32-wasi as a reactor
# module with our glue (glue/: C, and runtime.py embedded), and the standard library as a stored zip
# of .pyc files. Outputs (git-ignored):
#   guest/python/wasm/python.wasm          the reactor (exports: glue/glue.c; docs/abi.md)
#   guest/python/wasm/lib/python313.zip    the stdlib; the guest sees it as
#                                          /usr/local/lib/python313.zip
#
# The source is the upstream release as Debian trixie ships it: the .orig
# tarball of the python3.13 source package, fetched with a private apt
# configuration (deb-src, trixie only; the machine's own sources are not
# touched) and checked against a pinned sha256. Nothing else is downloaded:
# not the .dsc, nor Debian's patches (debian.tar.xz), which are for Debian's
# own layout.
#
# Steps, each cached under guest/python/build/ by a hash of what went into it:
#   1. a native "build Python" of the same version (cross builds need one;
#      bookworm has no python3.13) - about 3 minutes on 2 idle cores;
#   2. configure + make of CPython for wasm32-wasi with bookworm's clang 14
#      and wasi-libc, CPython's own Tools/wasm/config.site-wasm32-wasi plus two
#      cache variables (that wasi-libc has no <pthread.h>; pthread_t is 4
#      bytes on wasm32) - about 1.5 minutes - from a copy of the source with
#      our patches (patches/*.patch, each saying why) applied;
#   3. the reactor: the glue (glue/*.c, runtime.py) linked against libpython3.13.a, and the stdlib
#      zip (mkzip.py, run by the build Python) - seconds.
# With nothing changed a rebuild only compares a stamp (well under a second).
#
# Environment: JOBS (parallel make jobs, default nproc), PY_MIRROR (Debian
# mirror, default: the one this machine uses).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$here/build"
out_wasm="$here/wasm/python.wasm"
out_zip="$here/wasm/lib/python313.zip"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

py_version=3.13.5
orig="python3.13_${py_version}.orig.tar.xz"
orig_sha256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640

CC_WASI=clang
# The wasm stack: 8 MiB (CPython's own WASI setting). With 512 KiB deep
# recursion trapped ("out of bounds memory access") instead of raising
# RecursionError; with 8 MiB it raises. --stack-first puts the stack below
# the data, so an overflow traps instead of corrupting memory.
stack_size=8388608
initial_memory=20971520
# __stack_pointer is exported so a host can capture it in an initialised
# image (as the QuickJS guest does); exporting a mutable global needs the
# mutable-globals feature, hence --no-check-features. The glue's own exports
# are named in glue/*.c (export_name).
ldflags=(--target=wasm32-wasi -mexec-model=reactor
	-Wl,-z,stack-size=$stack_size -Wl,--stack-first -Wl,--initial-memory=$initial_memory
	-Wl,--strip-all -Wl,--export=__stack_pointer -Wl,--no-check-features)
syslibs=(-lwasi-emulated-signal -lwasi-emulated-getpid -lwasi-emulated-process-clocks -lm)

say() { echo "guest-python: $*" >&2; }
die() {
	echo "guest-python: error: $*" >&2
	exit 1
}

# deps installs what the build needs when it is missing (as root, or with
# sudo): the QuickJS guest's WASI toolchain, and gcc/make/xz for the native
# build Python.
deps() {
	"$root/scripts/install-deps.sh" clang lld wasi-libc libclang-rt-dev-wasm32 gcc make xz-utils dpkg patch
	local rd
	rd=$("$CC_WASI" -print-resource-dir)
	[ -f "$rd/lib/wasi/libclang_rt.builtins-wasm32.a" ] || die "no libclang_rt.builtins-wasm32.a (package libclang-rt-dev-wasm32)"
	[ -f /usr/include/wasm32-wasi/stdlib.h ] || die "no /usr/include/wasm32-wasi (package wasi-libc)"
}

# mirror prints the Debian archive this machine already uses.
mirror() {
	if [ -n "${PY_MIRROR:-}" ]; then
		echo "$PY_MIRROR"
		return
	fi
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*\/debian\/?$/) { print $i; exit } }')
	echo "${m:-http://deb.debian.org/debian}"
}

# apt runs apt-get with a private configuration listing only trixie's
# sources, its lists and cache under guest/python/build/apt.
apt() {
	local dir="$build/apt"
	apt-get -q -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Debug::NoLocking=1 \
		-o APT::Sandbox::User=root -o Acquire::Languages=none "$@"
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# fetch_source leaves the verified orig tarball at $build/dl/$orig and the
# unpacked tree at $src.
fetch_source() {
	local dl="$build/dl" dir="$build/src/Python-$py_version"
	src=$dir
	[ -f "$dir/.ok" ] && return 0
	mkdir -p "$dl"
	if [ ! -f "$dl/$orig" ] || [ "$(sha256 "$dl/$orig")" != "$orig_sha256" ]; then
		local m adir="$build/apt"
		m=$(mirror)
		mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial"
		cat >"$adir/sources.list" <<-EOT
			deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $m trixie main
		EOT
		say "updating a private apt index of trixie's sources from $m"
		apt update >"$adir/update.log" 2>&1 || {
			tail -5 "$adir/update.log" >&2
			die "apt-get update failed (see $adir/update.log)"
		}
		# Only the .orig tarball: its address from the signed Sources index
		# (apt-get source --print-uris), fetched by apt's own downloader,
		# which checks it against the pinned sha256. The .dsc and Debian's
		# patches are not downloaded.
		local uri
		uri=$(apt source --print-uris python3.13 2>"$adir/download.log" | awk -v f="$orig" '$2 == f { gsub("\047", "", $1); print $1; exit }')
		[ -n "$uri" ] || die "trixie's python3.13 has no $orig (see $adir/download.log)"
		say "downloading $uri"
		/usr/lib/apt/apt-helper download-file "$uri" "$dl/$orig.part" "SHA256:$orig_sha256" >>"$adir/download.log" 2>&1 || {
			tail -5 "$adir/download.log" >&2
			rm -f "$dl/$orig.part"
			die "downloading $orig failed (see $adir/download.log)"
		}
		mv "$dl/$orig.part" "$dl/$orig"
		local got
		got=$(sha256 "$dl/$orig")
		[ "$got" = "$orig_sha256" ] || {
			rm -f "$dl/$orig"
			die "$orig: checksum mismatch (got $got, want $orig_sha256)"
		}
	fi
	say "unpacking $orig"
	rm -rf "$dir"
	mkdir -p "$build/src"
	tar -C "$build/src" -xJf "$dl/$orig"
	[ -f "$dir/configure" ] || die "$orig has no Python-$py_version/configure"
	touch "$dir/.ok"
}

# hash prints one sha256 over its arguments (file contents and strings).
hash() {
	local a
	for a in "$@"; do
		if [ -f "$a" ]; then sha256sum "$a"; else echo "$a"; fi
	done | sha256sum | cut -c1-16
}

# build_native builds the build Python into $native (its ./python).
build_native() {
	local args=(--without-ensurepip --disable-test-modules)
	local key
	key=$(hash native-v1 "$orig_sha256" "${args[*]}" "$(gcc --version | head -1)")
	native="$build/native-$key"
	[ -f "$native/.ok" ] && return 0
	say "building the native build Python $py_version ($JOBS jobs; log: $native/build.log)"
	local start=$SECONDS
	[ -f "$native/config.status" ] || rm -rf "$native"
	mkdir -p "$native"
	# Only what a cross build and mkzip.py use: the interpreter and its
	# shared extension modules (not the test programs), built -O1 without
	# debug information (CPython's -g -O3 takes several times longer to
	# compile, for a build Python that runs for seconds). OPT is not part
	# of the key: it changes how fast the build Python is, not what it does.
	if [ ! -f "$native/Makefile" ]; then
		(cd "$native" && "$src/configure" "${args[@]}" >"$native/build.log" 2>&1) || {
			tail -20 "$native/build.log" >&2
			die "configuring the native build failed (see $native/build.log)"
		}
	fi
	(cd "$native" && make -j"$JOBS" OPT="-DNDEBUG -O1 -Wall" python sharedmods >>"$native/build.log" 2>&1) || {
		tail -20 "$native/build.log" >&2
		die "the native build failed (see $native/build.log)"
	}
	touch "$native/.ok"
	say "native build Python built in $((SECONDS - start)) s"
}

# patch_source leaves at $wsrc a copy of $src with our patches (patches/*.patch,
# each saying why) applied: the source the wasm32-wasi build compiles. The
# native build Python compiles $src as released.
patch_source() {
	local key p
	key=$(hash patched-v1 "$orig_sha256" "$here"/patches/*.patch)
	wsrc="$build/src/Python-$py_version+$key"
	[ -f "$wsrc/.ok" ] && return 0
	# Made aside and moved in whole, so that a copy or a patch cut short is
	# never taken for done; a patch must apply exactly (no fuzz).
	local part="$wsrc.part"
	rm -rf "$wsrc" "$part"
	cp -a "$src" "$part"
	rm -f "$part/.ok"
	for p in "$here"/patches/*.patch; do
		patch --batch --forward --fuzz=0 -s -p1 -d "$part" <"$p" || die "could not apply patches/$(basename "$p") to $part"
	done
	mv "$part" "$wsrc"
	touch "$wsrc/.ok"
}

# build_wasi configures and makes CPython for wasm32-wasi in $wasi.
build_wasi() {
	local rd
	rd=$("$CC_WASI" -print-resource-dir)
	# -nostdinc and explicit include paths: Debian's clang also searches
	# /usr/include for --target=wasm32-wasi, and host headers (zlib,
	# openssl) would leak into configure's checks.
	local cc="$CC_WASI --target=wasm32-wasi -nostdinc -isystem $rd/include -isystem /usr/include/wasm32-wasi"
	local site_extra=$'ac_cv_have_pthread_t=yes\nac_cv_sizeof_pthread_t=4'
	# --with-pymalloc: CPython's small-object allocator, which configure
	# leaves out for WASI by default. Without it every object was a dlmalloc
	# and a dlfree: 12% of a nested call's guest time on wasmtime (perf),
	# and objects spread over more pages. With it, on wazero: a nested call
	# 0.96x, the ten session feeds 0.99x (medians of 4 alternated rounds),
	# and a session holding 100,000 small strings suspends to 0.58x the bytes
	# (docs/performance.md, "Sessions").
	local args=(--host=wasm32-unknown-wasi --build="$("$src/config.guess")" --disable-test-modules --without-ensurepip --with-pymalloc)
	local key
	# CPython's optimisation without its -g: the debug information would be
	# stripped anyway, and makes the compile several times slower.
	local opt="-DNDEBUG -O3 -Wall"
	key=$(hash wasi-v1 "$wsrc" "$native" "$cc" "$site_extra" "${args[*]}" "$opt" "$("$CC_WASI" --version | head -1)")
	wasi="$build/wasi-$key"
	[ -f "$wasi/.ok" ] && return 0
	say "building CPython $py_version for wasm32-wasi ($JOBS jobs; log: $wasi/build.log)"
	local start=$SECONDS
	rm -rf "$wasi"
	mkdir -p "$wasi"
	{
		cat "$wsrc/Tools/wasm/config.site-wasm32-wasi"
		echo "# guest/python/build.sh: bookworm's wasi-libc has no <pthread.h>, and"
		echo "# CPython's pthread stubs still need SIZEOF_PTHREAD_T (4 on wasm32)."
		echo "$site_extra"
	} >"$wasi/config.site"
	(cd "$wasi" && CONFIG_SITE="$wasi/config.site" CC="$cc" CPP="$cc -E" CXX=false \
		AR=llvm-ar-14 RANLIB=llvm-ranlib-14 PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/nonexistent \
		"$wsrc/configure" -C "${args[@]}" --with-build-python="$native/python" >"$wasi/build.log" 2>&1 &&
		make -j"$JOBS" OPT="$opt" python.wasm >>"$wasi/build.log" 2>&1) || {
		tail -20 "$wasi/build.log" >&2
		die "the wasm32-wasi build failed (see $wasi/build.log)"
	}
	touch "$wasi/.ok"
	say "CPython for wasm32-wasi built in $((SECONDS - start)) s"
}

# runtime_header writes runtime.py as a C array (ptcx_runtime, NUL-ended)
# into $1, which glue.c includes.
runtime_header() {
	"$native/python" -I -c '
import sys
data = open(sys.argv[1], "rb").read() + b"\0"
out = ["/* Generated by guest/python/build.sh from glue/runtime.py. */",
       "static const unsigned char ptcx_runtime[] = {"]
for i in range(0, len(data), 16):
    out.append(" " + "".join("%d," % b for b in data[i:i + 16]))
out.append("};")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
' "$here/glue/runtime.py" "$1"
}

# link_reactor links the glue (glue/*.c, with runtime.py embedded) against
# the wasi build's libpython into $1.
link_reactor() {
	local rd gen="$build/gen" objs=() f
	rd=$("$CC_WASI" -print-resource-dir)
	mkdir -p "$gen"
	runtime_header "$gen/runtime.h" || die "embedding runtime.py failed"
	for f in "$here"/glue/*.c; do
		"$CC_WASI" --target=wasm32-wasi -nostdinc -isystem "$rd/include" -isystem /usr/include/wasm32-wasi \
			-O2 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
			-I"$wsrc/Include" -I"$wasi" -I"$gen" \
			-c "$f" -o "$build/$(basename "$f" .c).o"
		objs+=("$build/$(basename "$f" .c).o")
	done
	local archives=()
	mapfile -t archives < <(find "$wasi/Modules" -name '*.a' | sort)
	"$CC_WASI" "${ldflags[@]}" -o "$1" "${objs[@]}" \
		"$wasi/Modules/config.o" "$wasi/Modules/getpath.o" "$wasi/Python/frozen.o" \
		"$wasi/libpython3.13.a" "${archives[@]}" "${syslibs[@]}" 2>&1 |
		grep -v "argument unused during compilation: '-nostdinc'" >&2 || true
	[ -f "$1" ] || die "linking python.wasm failed"
}

main() {
	local key
	key=$(hash "$orig_sha256" "$here/build.sh" "$here"/patches/*.patch "$here"/glue/*.c "$here"/glue/*.h "$here/glue/runtime.py" "$here/mkzip.py" "$(command -v "$CC_WASI" >/dev/null && "$CC_WASI" --version | head -1)")
	if [ -f "$out_wasm" ] && [ -f "$out_zip" ] && [ "$(cat "$build/stamp" 2>/dev/null)" = "$key" ]; then
		say "python.wasm is up to date (CPython $py_version)"
		return 0
	fi
	local start=$SECONDS
	deps
	fetch_source
	build_native
	patch_source
	build_wasi
	say "linking the reactor and zipping the stdlib"
	mkdir -p "$(dirname "$out_wasm")" "$(dirname "$out_zip")"
	link_reactor "$build/python.wasm.tmp"
	"$native/python" -I "$here/mkzip.py" "$src/Lib" "$build/python313.zip.tmp" || die "zipping the stdlib failed"
	mv "$build/python.wasm.tmp" "$out_wasm"
	mv "$build/python313.zip.tmp" "$out_zip"
	echo "$key" >"$build/stamp"
	say "built python.wasm ($(stat -c %s "$out_wasm") bytes) and python313.zip ($(stat -c %s "$out_zip") bytes) in $((SECONDS - start)) s"
}

main "$@"
