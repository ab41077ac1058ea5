#!/usr/bin/env bash
# build.sh builds guest/wasm/guest.wasm: QuickJS-NG, our C glue and the JavaScript
# prelude, compiled for wasm32-wasi as a reactor module.
#
# The QuickJS-NG C sources come from Debian's qjs-src package, fetched with a
# private apt configuration (the machine's own sources are not touched) and
# checked against pinned checksums. Everything is cached under guest/build/:
# the .deb, the unpacked sources, the apt lists and the object files, keyed by
# a hash of what went into them, so a second build is instant.
#
# Environment: CC (default clang), JOBS (parallel compiles, default nproc),
# QJS_MIRROR (Debian mirror, default: the one this machine uses).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
out="$here/wasm/guest.wasm"
CC=${CC:-clang}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# Known-good qjs-src packages as "version sha256", tried in order: sid first,
# then trixie-backports (sid drops old versions, so both are pinned).
known=(
	"0.17.0-1 04631979bdadaccffd76c1cb0aff5d07389aa889a90b6a902eba858a3a3b3988"
	"0.16.2-2~bpo13+1 b857c3e1db25f0ea57195c781d6c6ae24b45bb9740af39514e2b0abc9dd15bef"
)
# patches names the changes made to the unpacked sources (enable_stack_limit,
# inline_float_mod, settleable_promises, reused_await_functions,
# kept_reactions, added_fields, session_scopes, placed_regexp_errors,
# plain_objects), which are kept patched under build/src/VERSION+patches:
# change it when they change, so that no cache keeps sources patched the old
# way (the hashes of glue/promise.inc, glue/await.patch, glue/reactions.patch,
# glue/fields.patch, glue/scopes.patch, glue/regexp.patch and glue/fast.inc
# are part of it).
patches=p8-$(cat "$here/glue/promise.inc" "$here/glue/await.patch" "$here/glue/reactions.patch" "$here/glue/fields.patch" "$here/glue/scopes.patch" "$here/glue/regexp.patch" "$here/glue/fast.inc" | sha256sum | cut -c1-8)
engine_files=(quickjs.c libregexp.c libunicode.c dtoa.c)
glue_files=(glue.c natives.c memory.c encode.c calls.c result.c fmod.c)

stack_size=262144
# -O3, not -O2: the interpreter runs a CPU-bound loop about 10% faster on
# wazero (docs/performance-notebook.md, "compute_loop against quickjs-wasi") for a
# guest 6% larger.
cflags=(--target=wasm32-wasi -nostdinc
	-isystem "$("$CC" -print-resource-dir)/include" -isystem /usr/include/wasm32-wasi
	-O3 -mbulk-memory -DNDEBUG -D_GNU_SOURCE -D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS
	-funsigned-char -fno-exceptions -Wno-everything)
glue_cflags=(-Wall -Wextra -Werror -Wno-unused-parameter)
# __stack_pointer is exported so the host can capture it in its initialised
# image (wasmhost/image.go); exporting a mutable global needs the
# mutable-globals feature, which every engine we host on has, so the linker's
# feature check (the objects were compiled without the flag) is skipped.
# No -O flag here: with one, clang runs wasm-opt by itself when binaryen is
# installed, and the guest would depend on what the machine has (wasm-opt
# did not pay either; docs/performance-notebook.md).
ldflags=(--target=wasm32-wasi -mexec-model=reactor -nostdlib++
	-Wl,-z,stack-size=$stack_size -Wl,--stack-first -Wl,--strip-all -Wl,--gc-sections -Wl,--export=__stack_pointer -Wl,--no-check-features -Wl,--wrap=fmod
	-lwasi-emulated-signal -lwasi-emulated-process-clocks)

say() { echo "guest: $*" >&2; }
die() {
	echo "guest: error: $*" >&2
	exit 1
}

check_toolchain() {
	local missing=()
	command -v "$CC" >/dev/null || missing+=("$CC (package clang)")
	command -v wasm-ld >/dev/null || missing+=("wasm-ld (package lld)")
	[ -f /usr/include/wasm32-wasi/stdlib.h ] || missing+=("/usr/include/wasm32-wasi (package wasi-libc)")
	if command -v "$CC" >/dev/null; then
		[ -f "$("$CC" -print-resource-dir)/lib/wasi/libclang_rt.builtins-wasm32.a" ] ||
			missing+=("libclang_rt.builtins-wasm32.a (package libclang-rt-dev-wasm32)")
	fi
	command -v dpkg-deb >/dev/null || missing+=("dpkg-deb (package dpkg)")
	command -v patch >/dev/null || missing+=("patch (package patch)")
	[ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]}; run 'make deps' (scripts/install-deps.sh)"
}

# mirror prints the Debian archive this machine already uses.
mirror() {
	if [ -n "${QJS_MIRROR:-}" ]; then
		echo "$QJS_MIRROR"
		return
	fi
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*\/debian\/?$/) { print $i; exit } }')
	echo "${m:-http://deb.debian.org/debian}"
}

# apt runs apt-get with a private configuration that lists only sid and
# trixie-backports, and keeps its lists and cache under guest/build/apt.
apt() {
	local dir="$build/apt"
	apt-get -q -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Debug::NoLocking=1 \
		-o APT::Sandbox::User=root -o Acquire::Languages=none \
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::CNF::DefaultEnabled=false "$@"
}

apt_updated=
apt_update() {
	[ -n "$apt_updated" ] && return 0
	local dir="$build/apt" m
	m=$(mirror)
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	cat >"$dir/sources.list" <<-EOF
		deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $m sid main
		deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $m trixie-backports main
	EOF
	say "updating a private apt index of sid and trixie-backports from $m"
	apt update >"$dir/update.log" 2>&1 || {
		tail -5 "$dir/update.log" >&2
		return 1
	}
	apt_updated=1
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# enable_stack_limit undoes QuickJS-NG 0.16's WASI special case that turns
# the engine's stack limit off (0.17 keeps it): without the limit, deep
# recursion overflows the 256 KiB wasm stack and traps instead of raising a
# catchable RangeError. The sources get one other change, inline_float_mod.
enable_stack_limit() {
	local f="$1/quickjs.c"
	sed -i -e '/^static void update_stack_limit(JSRuntime \*rt)$/,/^}$/{' \
		-e '/^#if defined(__wasi__)$/,/^#else$/d' -e '/^#endif$/d' -e '}' "$f"
	if sed -n '/^static void update_stack_limit(JSRuntime \*rt)$/,/^}$/p' "$f" | grep -q '__wasi__\|#if'; then
		die "could not enable the stack limit in $f"
	fi
}

# inline_float_mod gives the interpreter's % the inline path for double
# operands that QuickJS-NG 0.17 gives +, -, * and / (its "mixed int/float"
# paths): a % with a double operand, e.g. (s + i * i) % m once i * i passes
# 2^31, then calls fmod at once instead of going through
# js_binary_arith_slow's conversions (ToNumeric, ToFloat64), which took
# about a quarter of such a loop's time. The result is the slow path's,
# js_float64(fmod(d1, d2)). A source without those paths (0.16) is built
# as it is, and the build says so.
inline_float_mod() {
	local f="$1/quickjs.c" range='/^        CASE(OP_mod):$/,/^        CASE(OP_pow):$/'
	if ! grep -q '^static inline bool js_arith_to_float64(JSValue v, double \*pd)$' "$f" ||
		[ "$(sed -n "$range{/^                } else {\$/p}" "$f" | wc -l)" != 1 ]; then
		say "qjs-src $2 has no mixed int/float arithmetic paths: % on doubles keeps QuickJS's slow path"
		return 0
	fi
	sed -i -e "$range{" \
		-e 's/^                JSValue op1, op2;$/                JSValue op1, op2;\n                double d1, d2;/' \
		-e 's/^                } else {$/                } else if (js_arith_to_float64(op1, \&d1) \&\&\n                           js_arith_to_float64(op2, \&d2)) {\n                    sp[-2] = js_float64(fmod(d1, d2));\n                    sp--;\n                } else {/' \
		-e '}' "$f"
	sed -n "$range p" "$f" | grep -q 'js_float64(fmod(d1, d2))' || die "could not inline % on doubles in $f"
}

# settleable_promises appends glue/promise.inc to quickjs.c: promises that the
# glue settles without resolving functions (see that file), built on the
# engine's own promise internals, which it checks are there.
settleable_promises() {
	local f="$1/quickjs.c" sym
	for sym in '^static void fulfill_or_reject_promise(JSContext \*ctx, JSValueConst promise,$' \
		'^static JSValue js_promise_resolve_thenable_job(JSContext \*ctx,$' '^static JSShape \*find_hashed_shape_proto(' \
		'^static JSShape \*js_new_shape(JSContext \*ctx, JSObject \*proto)$' '^static JSValue JS_NewObjectFromShape('; do
		grep -q "$sym" "$f" || die "qjs-src $2 lacks what glue/promise.inc uses ($sym in $f)"
	done
	cat "$here/glue/promise.inc" >>"$f"
}

# reused_await_functions applies glue/await.patch: an async function makes the
# resolving functions of its awaits once, not at every await (see the patch).
reused_await_functions() {
	optional_patch "$1" "$2" await.patch "every await makes its own resolving functions"
}

# optional_patch applies glue/$3 to the sources in $1 (qjs-src $2); a source
# it does not apply to is built as it is, and the build says so, with what
# that means ($4).
optional_patch() {
	if ! patch --dry-run -s -p1 -d "$1" <"$here/glue/$3" >/dev/null 2>&1; then
		say "qjs-src $2 does not take glue/$3: $4"
		return 0
	fi
	patch -s -p1 -d "$1" <"$here/glue/$3" || die "could not apply glue/$3 to $1"
}

# kept_reactions applies glue/reactions.patch (after glue/await.patch): the
# engine keeps a run job entry and up to four promise reaction records for
# the next ones instead of freeing and allocating them again, and
# PromiseResolve reads a plain promise's constructor without the general
# property lookup (see the patch).
kept_reactions() {
	optional_patch "$1" "$2" reactions.patch "promise reactions and jobs are allocated one by one"
}

# added_fields applies glue/fields.patch: the interpreter adds a field new to
# an ordinary, extensible object (an object literal's) without the general
# definition path (see the patch).
added_fields() {
	optional_patch "$1" "$2" fields.patch "object literals define each field the general way"
}

# session_scopes applies glue/scopes.patch, which the glue needs (it calls
# JS_SloppyNextDirectEval): a session's programs are compiled by strict
# continuations as sloppy code, and a function calling a direct eval closes
# over the variables of its enclosing functions once a name, not once each,
# shadowed ones included (see the patch and glue.c's sessions).
session_scopes() {
	required_patch "$1" "$2" scopes.patch "the glue's sessions need it"
}

# placed_regexp_errors applies glue/regexp.patch: a regular expression that
# does not compile is a SyntaxError that says where it is (the engine kept the
# backtrace its regexp compiler's throw made: none in a program, the caller's
# frames in a direct eval's code). Required: the tests hold errors to it.
placed_regexp_errors() {
	required_patch "$1" "$2" regexp.patch "syntax errors must say where a bad regular expression is"
}

# required_patch applies glue/$3 to the sources in $1 (qjs-src $2), or stops
# the build, saying why it is needed ($4).
required_patch() {
	patch --dry-run -s -p1 -d "$1" <"$here/glue/$3" >/dev/null 2>&1 ||
		die "qjs-src $2 does not take glue/$3: $4"
	patch -s -p1 -d "$1" <"$here/glue/$3" || die "could not apply glue/$3 to $1"
}

# plain_objects appends glue/fast.inc to quickjs.c: the glue's short cuts for
# plain objects (see that file), built on the engine's objects and shapes.
plain_objects() {
	local f="$1/quickjs.c" sym
	for sym in '^static inline JSShapeProperty \*find_own_property(' '^static JSProperty \*add_property(JSContext \*ctx,$' \
		'^static bool JS_AtomIsArrayIndex(JSContext \*ctx, uint32_t \*pval, JSAtom atom)$' '^static inline JSShapeProperty \*get_shape_prop(' \
		'^static inline uint8_t \*str8(JSString \*p)$' '^    JS_STRING_KIND_NORMAL,$'; do
		grep -q "$sym" "$f" || die "qjs-src $2 lacks what glue/fast.inc uses ($sym in $f)"
	done
	cat "$here/glue/fast.inc" >>"$f"
}

# fetch_sources sets src to the directory of a verified, unpacked qjs-src.
fetch_sources() {
	local tried=() entry version sum deb dir got
	mkdir -p "$build/deb"
	for entry in "${known[@]}"; do
		version=${entry%% *}
		sum=${entry##* }
		dir="$build/src/$version+$patches"
		if [ -f "$dir/.ok" ]; then
			src="$dir/usr/src/quickjs-ng"
			qjs_version=$version
			return 0
		fi
		deb="$build/deb/qjs-src_${version}_all.deb"
		if [ ! -f "$deb" ]; then
			if ! apt_update; then
				tried+=("$version: apt-get update failed (see $build/apt/update.log)")
				continue
			fi
			say "downloading qjs-src $version"
			if ! (cd "$build/deb" && apt download "qjs-src=$version" >"$build/apt/download.log" 2>&1); then
				tried+=("$version: not downloadable ($(grep -m1 '^E:' "$build/apt/download.log" || echo 'see download.log'))")
				continue
			fi
			# apt names the file with the version's epoch colon escaped; normalise it.
			got=$(ls "$build/deb"/qjs-src_*"${version#*:}"_all.deb 2>/dev/null | head -1)
			[ -n "$got" ] && [ "$got" != "$deb" ] && mv "$got" "$deb"
		fi
		if [ "$(sha256 "$deb")" != "$sum" ]; then
			tried+=("$version: checksum mismatch (got $(sha256 "$deb"), want $sum)")
			rm -f "$deb"
			continue
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		dpkg-deb -x "$deb" "$dir"
		[ -f "$dir/usr/src/quickjs-ng/quickjs.c" ] || {
			tried+=("$version: the package has no /usr/src/quickjs-ng/quickjs.c")
			continue
		}
		enable_stack_limit "$dir/usr/src/quickjs-ng"
		inline_float_mod "$dir/usr/src/quickjs-ng" "$version"
		settleable_promises "$dir/usr/src/quickjs-ng" "$version"
		reused_await_functions "$dir/usr/src/quickjs-ng" "$version"
		kept_reactions "$dir/usr/src/quickjs-ng" "$version"
		added_fields "$dir/usr/src/quickjs-ng" "$version"
		session_scopes "$dir/usr/src/quickjs-ng" "$version"
		placed_regexp_errors "$dir/usr/src/quickjs-ng" "$version"
		plain_objects "$dir/usr/src/quickjs-ng" "$version"
		touch "$dir/.ok"
		src="$dir/usr/src/quickjs-ng"
		qjs_version=$version
		return 0
	done
	local t msg="no known-good qjs-src could be fetched. Tried:"
	for t in "${tried[@]}"; do msg+=$'\n'"  - qjs-src $t"; done
	die "$msg"
}

# hash prints one sha256 over its arguments (file contents and strings).
hash() {
	local a
	for a in "$@"; do
		if [ -f "$a" ]; then sha256sum "$a"; else echo "$a"; fi
	done | sha256sum | cut -c1-16
}

# prelude_header turns prelude.js into a C array, NUL-terminated as
# JS_Eval requires.
prelude_header() {
	{
		echo "/* Generated by guest/build.sh from prelude.js. Do not edit. */"
		echo "static const unsigned char ptcx_prelude[] = {"
		od -An -v -tx1 "$here/prelude.js" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
		echo "0x00};"
		echo "static const unsigned int ptcx_prelude_len = sizeof(ptcx_prelude) - 1;"
	} >"$1"
}

compile() { # compile OUT SRC: the glue gets stricter warnings and the headers
	local out=$1 src=$2 extra=()
	case "$src" in
	"$here"/glue/*) extra=("${glue_cflags[@]}" -I"$src_dir" -I"$gobj") ;;
	esac
	"$CC" "${cflags[@]}" "${extra[@]}" -c "$src" -o "$out.tmp" && mv "$out.tmp" "$out"
}

main() {
	check_toolchain
	fetch_sources
	local clang_version f
	clang_version=$("$CC" --version | head -1)

	local engine_inputs=() glue_inputs=()
	for f in "$src"/*.c "$src"/*.h; do engine_inputs+=("$f"); done
	for f in "${glue_files[@]}" ptcx.h; do glue_inputs+=("$here/glue/$f"); done
	glue_inputs+=("$here/prelude.js")
	local engine_key glue_key link_key
	engine_key=$(hash "${engine_inputs[@]}" "${cflags[*]}" "$clang_version")
	glue_key=$(hash "${glue_inputs[@]}" "$engine_key" "${glue_cflags[*]}")
	link_key=$(hash "$engine_key" "$glue_key" "${ldflags[*]}" "$here/build.sh")

	if [ -f "$out" ] && [ "$(cat "$build/stamp" 2>/dev/null)" = "$link_key" ]; then
		say "guest.wasm is up to date (qjs-src $qjs_version)"
		return 0
	fi
	local start=$SECONDS
	local eobj="$build/obj/engine-$engine_key"
	gobj="$build/obj/glue-$glue_key"
	src_dir=$src
	mkdir -p "$eobj" "$gobj"
	prelude_header "$gobj/prelude.h"

	# Objects to compile (outs[i] from srcs[i]), JOBS at a time; quickjs.c
	# comes first and dominates, the small files share the other cores.
	local outs=() srcs=() objs=() i
	for f in "${engine_files[@]}"; do
		objs+=("$eobj/${f%.c}.o")
		[ -f "$eobj/${f%.c}.o" ] || { outs+=("$eobj/${f%.c}.o") && srcs+=("$src/$f"); }
	done
	for f in "${glue_files[@]}"; do
		objs+=("$gobj/${f%.c}.o")
		[ -f "$gobj/${f%.c}.o" ] || { outs+=("$gobj/${f%.c}.o") && srcs+=("$here/glue/$f"); }
	done
	[ ${#outs[@]} -gt 0 ] && say "compiling ${#outs[@]} C files, $JOBS at a time (qjs-src $qjs_version)"
	local running=0 failed=0
	for i in "${!outs[@]}"; do
		if [ $running -ge "$JOBS" ]; then
			wait -n || failed=1
			running=$((running - 1))
		fi
		compile "${outs[$i]}" "${srcs[$i]}" &
		running=$((running + 1))
	done
	while [ $running -gt 0 ]; do
		wait -n || failed=1
		running=$((running - 1))
	done
	[ $failed -eq 0 ] || die "compilation failed"

	say "linking"
	"$CC" "${ldflags[@]}" "${objs[@]}" -o "$build/guest.wasm.tmp"
	mv "$build/guest.wasm.tmp" "$out"
	echo "$link_key" >"$build/stamp"
	say "built $(basename "$out") ($(stat -c %s "$out") bytes) in $((SECONDS - start)) s"
}

main "$@"
