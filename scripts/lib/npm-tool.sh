# npm-tool.sh: install_npm_tool, sourced by the scripts that install a pinned npm package into
# .tools/ (install-tsc.sh, install-pyright.sh).
#
# install_npm_tool NAME PACKAGE VERSION ENTRY installs PACKAGE at VERSION into .tools/NAME from
# scripts/NAME/package.json, whose scripts/NAME/package-lock.json carries the tarball's integrity
# hash, which `npm ci` verifies (--ignore-scripts: nothing of the package runs at install). ENTRY is
# the package's file Node runs, relative to node_modules/PACKAGE; it is run once with --version to
# check the install. The install is skipped when .tools/NAME already holds exactly what the two files
# describe, so a second run costs a few milliseconds. Node and npm come from Debian when missing.
# Tests never touch the network: they only look for the installed tool.
install_npm_tool() {
  local name=$1 pkg=$2 want_version=$3 entry=$4
  local root src dst want_stamp got
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  src="$root/scripts/$name"
  dst="$root/.tools/$name"
  want_stamp=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [ -f "$dst/.stamp" ] && [ "$(cat "$dst/.stamp")" = "$want_stamp" ] &&
    [ -f "$dst/node_modules/$pkg/$entry" ] && [ "$(npm_tool_version "$dst" "$pkg")" = "$want_version" ]; then
    return 0
  fi

  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "install-$name: node and npm are missing; installing Debian's nodejs and npm" >&2
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi

  echo "install-$name: installing $pkg $want_version into ${dst#"$root"/}" >&2
  rm -rf "$dst"
  mkdir -p "$dst"
  cp "$src/package.json" "$src/package-lock.json" "$dst/"
  (cd "$dst" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

  got=$(npm_tool_version "$dst" "$pkg")
  if [ "$got" != "$want_version" ]; then
    echo "install-$name: expected $pkg $want_version, found '${got}'" >&2
    return 1
  fi
  node "$dst/node_modules/$pkg/$entry" --version >/dev/null
  echo "$want_stamp" >"$dst/.stamp"
}

# npm_tool_version DIR PACKAGE prints the version of PACKAGE installed under DIR, or nothing.
npm_tool_version() {
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' \
    "$1/node_modules/$2/package.json" 2>/dev/null | head -1
}
