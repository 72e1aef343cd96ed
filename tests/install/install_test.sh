#!/usr/bin/env bash
# The installed package, locally and fast (the fresh-Debian version is scripts/package_test.sh):
# `cmake --install` into a temporary prefix, then check the layout (binary, man page, bash
# completion, presets, scenarios, headers, CMake package, pkg-config file), run the installed
# binary on an installed example, build examples/consumer against the prefix with
# find_package(nicsim), and check that nicsim.pc names every installed library.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
for f in bin/nicsim share/man/man1/nicsim.1 share/bash-completion/completions/nicsim \
         share/nicsim/presets share/nicsim/scenarios/examples/100mbit-5ms.toml \
         include/nicsim/algo/fq_codel.h include/nicsim/sim/simulation.h \
         "$libdir/cmake/nicsim/nicsimConfig.cmake" "$libdir/pkgconfig/nicsim.pc"; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
[ ! -e "$prefix/include/nicsim/testing" ] || fail "test helpers installed as public headers"

"$prefix/bin/nicsim" --version | grep -q '^nicsim [0-9]' || fail "installed nicsim --version"
# The man page is well-formed roff that names every command (man-db's man renders it when
# installed; groff is what it runs).
if command -v man >/dev/null; then
  page=$(MANWIDTH=80 man -l "$prefix/share/man/man1/nicsim.1" 2>&1) || fail "man -l: $page"
  for c in run emulate plot completion; do
    grep -q "nicsim $c" <<<"$page" || fail "man page lacks 'nicsim $c'"
  done
fi
"$prefix/bin/nicsim" run "$prefix/share/nicsim/scenarios/examples/100mbit-5ms.toml" --quiet \
  >"$tmp/run.txt" || fail "installed nicsim run on an installed example: $(cat "$tmp/run.txt")"
grep -q 'goodput a->b' "$tmp/run.txt" || fail "installed nicsim run printed: $(cat "$tmp/run.txt")"

# find_package(nicsim): the out-of-tree consumer.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  "${launcher[@]}" >"$tmp/configure.txt" 2>&1 || fail "consumer configure: $(cat "$tmp/configure.txt")"
cmake --build "$tmp/consumer" >"$tmp/build.txt" 2>&1 || fail "consumer build: $(cat "$tmp/build.txt")"
out=$("$tmp/consumer/consumer" "$prefix/share/nicsim/scenarios/examples/100mbit-5ms.toml")
grep -q "goodput a->b [1-9]" <<<"$out" || fail "consumer printed: $out"
grep -q "fq_codel holds 1 packet" <<<"$out" || fail "consumer printed: $out"

# pkg-config: the flags point into the prefix and name every installed library, each one there
# (compiling against them is what the consumer above did; a second compile would double the time).
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
flags=$(pkg-config --cflags --libs nicsim) || fail "pkg-config --cflags --libs nicsim"
[[ "$flags" == *"-I$prefix/"* ]] || fail "pkg-config: no -I into the prefix: $flags"
for lib in "$prefix/$libdir"/libnicsim_*.a; do
  name=$(basename "$lib" .a)
  [[ " $flags " == *" -l${name#lib} "* ]] || fail "pkg-config does not link $name: $flags"
done
for l in $(tr ' ' '\n' <<<"$flags" | sed -n 's/^-l//p' | grep '^nicsim'); do
  [ -e "$prefix/$libdir/lib$l.a" ] || fail "pkg-config names lib$l.a, not installed"
done
echo "install_test: ok"
