#!/usr/bin/env bash
# CTest cli_options: the one command-line layer (tools/cli.h, issue 9 items 4 and 8), without
# privileges and without the network:
#  1. `nicsim --version` names the version (and the git commit when the build knows it);
#  2. every subcommand has a generated --help (synopsis, its explanation, every option);
#  3. the bash completion script (generated at build time, installed with the binary)
#     completes subcommands, each subcommand's options, the choices of an option and
#     files, and offers exactly the options each --help lists;
#  4. `--json -` writes the JSON to standard output (the tables go to stderr);
#  5. an output that cannot be written is refused before the run, with the reason (errno);
#     a write that fails after the run names the file and the reason;
#  6. one run selector everywhere: k=v,k=v and the spaced label for plot and export;
#  7. `nicsim compare` of a flent file says what the file is and what compare reads.
# Usage: options_test.sh NICSIM SOURCE_DIR COMPLETION_SCRIPT REPORT_SCHEMA_SAMPLE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../exports/common.sh"
completion=$3
report_sample=$4
cd "$work"
"$nicsim" run s.toml --json r.json --quiet >/dev/null

# 1. --version
v=$("$nicsim" --version)
[[ "$v" =~ ^nicsim\ [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]+\))?$ ]] || fail "--version: '$v'"

# 2. --help of every subcommand, generated from the definitions.
commands=$("$nicsim" --help | sed -n 's/^  \([a-z-]\+\) .*/\1/p' | grep -v '^help$')
[ "$(echo $commands)" = "run flent-test merge emulate topology export plot report compare server rrul test demo completion" ] \
  || fail "nicsim --help lists: $(echo $commands)"
for c in $commands; do
  help=$("$nicsim" "$c" --help) || fail "nicsim $c --help exited $?"
  [[ "$help" == "usage: nicsim $c"* ]] || fail "nicsim $c --help: no synopsis: ${help:0:80}"
  [[ "$help" == *"-h,--help"* ]] || fail "nicsim $c --help lists no options"
  [ "$("$nicsim" help "$c")" = "$help" ] || fail "nicsim help $c differs from nicsim $c --help"
done
for want in "--json OUT.json" "--csv DIR" "--flent OUT.flent.gz" "writes it to standard output"; do
  for c in run emulate rrul test; do
    [[ "$("$nicsim" $c --help)" == *"$want"* ]] || fail "nicsim $c --help lacks '$want'"
  done
done
[[ "$("$nicsim" emulate --help)" == *'CMD finds host b'*"--spin-budget F"* ]] \
  || fail "emulate --help lost its explanation"

# 3. bash completion.
bash -n "$completion" || fail "completion script: syntax"
complete_words() {  # words typed (the last one is completed) -> COMPREPLY, one per line
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _nicsim
           printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" nicsim "$@"
}
[ "$(complete_words "" | sort | tr '\n' ' ')" = \
  "--help --version compare completion demo emulate export flent-test help merge plot report rrul run server test topology " ] \
  || fail "subcommands: $(complete_words "")"
[ "$(complete_words e | tr '\n' ' ')" = "emulate export " ] || fail "e: $(complete_words e)"
[ "$(complete_words re)" = "report" ] || fail "re: $(complete_words re)"
[ "$(complete_words report r.json -)" = "$(printf -- '-h\n--help\n-o\n--output')" ] \
  || fail "report options: $(complete_words report r.json -)"
[ "$(complete_words rrul 127.0.0.1 --f)" = "--flent" ] || fail "rrul --f: $(complete_words rrul x --f)"
[ "$(complete_words test voip 127.0.0.1 --f)" = "--flent" ] \
  || fail "test --f: $(complete_words test voip x --f)"
[ "$(complete_words flent-test voip s.toml --em)" = "--emulate" ] \
  || fail "flent-test --em: $(complete_words flent-test voip s.toml --em)"
[ "$(complete_words plot r.json --kind "" | tr '\n' ' ')" = "totals cdf compare sweep tradeoff knee " ] \
  || fail "--kind values: $(complete_words plot r.json --kind "")"
[ "$(complete_words emulate s.toml --nic f)" = "fifo" ] || fail "--nic f"
[ "$(complete_words emulate s.toml --rec)" = "--record" ] || fail "--rec: $(complete_words emulate s.toml --rec)"
[ "$(complete_words emulate s.toml --record s.t)" = "s.toml" ] || fail "--record takes a file"
[[ "$("$nicsim" emulate --help)" == *"--record FILE"*"[[traffic.replay]]"* ]] \
  || fail "emulate --help lacks --record FILE"
[ "$(complete_words run s.t)" = "s.toml" ] || fail "scenario file: $(complete_words run s.t)"
[ "$(complete_words topology s.t)" = "s.toml" ] || fail "topology: $(complete_words topology s.t)"
[ "$(complete_words topology s.toml --d)" = "--dot" ] || fail "topology --d"
[ "$(complete_words emulate s.toml -- pin)" != "" ] || fail "no command completion after --"
# The completion offers exactly the options each --help lists.
for c in $commands; do
  from_help=$("$nicsim" "$c" --help | grep -oE '^  (-[a-zA-Z],)?--?[a-z][a-z-]*' |
              sed 's/^  //; s/,/\n/' | sort | tr '\n' ' ')
  from_completion=$(complete_words "$c" - | sort | tr '\n' ' ')
  [ "$from_help" = "$from_completion" ] \
    || fail "$c: --help lists '$from_help', the completion offers '$from_completion'"
done

# 4. --json - : JSON on stdout, tables on stderr.
"$nicsim" run s.toml --json - --quiet >stdout.json 2>tables.txt || fail "run --json -"
[ ! -e ./- ] || fail "--json - wrote a file named '-'"
$py -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["runs"]) == 2' stdout.json \
  || fail "--json - did not write the JSON to stdout: $(head -c 300 stdout.json)"
grep -q "^run bql=false: goodput" tables.txt || fail "tables not on stderr: $(cat tables.txt)"

# 5. outputs checked before the run; write errors say why.
expect_error 2 "--json /nonexistent/r.json: directory /nonexistent: No such file or directory" \
  "$nicsim" run s.toml --json /nonexistent/r.json
out=$("$nicsim" run s.toml --json /nonexistent/r.json 2>/dev/null) || true
[ -z "$out" ] || fail "the run ran although its JSON cannot be written"
mkdir -p ro
touch ro/x.flent.gz && chmod a-w ro/x.flent.gz
if [ "$(id -u)" -ne 0 ]; then  # root may write anything: the mode check is for users
  expect_error 2 "--flent ro/x.flent.gz: Permission denied" "$nicsim" run s.toml --flent ro/x.flent.gz
fi
expect_error 2 "--csv s.toml: s.toml is not a directory" "$nicsim" run s.toml --csv s.toml
expect_error 2 "--json ro: is a directory" "$nicsim" rrul 127.0.0.1:9 --json ro
expect_error 2 "--csv /nonexistent/d: directory /nonexistent: No such file or directory" \
  "$nicsim" export r.json --csv /nonexistent/d
# A write that fails after the run (a directory where a table goes): file and errno text.
mkdir -p csvdir/runs.csv
set +e
"$nicsim" export r.json --csv csvdir 2>write.err
rc=$?
set -e
[ $rc -eq 1 ] || fail "failed CSV write exited $rc"
grep -q "cannot write csvdir/runs.csv: Is a directory" write.err || fail "$(cat write.err)"

# 6. one selector syntax: k=v,k=v, the spaced label, and partial selectors.
"$nicsim" plot r.json --run "bql=true" -o a.svg 2>/dev/null || fail "plot --run k=v"
"$report_sample" full > full.json
"$nicsim" plot full.json --run "bql=true,rate=1Gbit" --kind cdf -o b.svg 2>/dev/null \
  || fail "plot --run k=v,k=v"
"$nicsim" plot full.json --run "bql=true rate=1Gbit" --kind cdf -o c.svg 2>/dev/null \
  || fail "plot --run with the spaced label"
"$nicsim" export full.json --flent k.flent.gz --run "rate=1Gbit,bql=true" 2>/dev/null \
  || fail "export --run k=v,k=v"
"$nicsim" export full.json --flent s.flent.gz --run "bql=true rate=1Gbit" 2>/dev/null \
  || fail "export --run with the spaced label"
cmp <(gzip -dc k.flent.gz) <(gzip -dc s.flent.gz) || fail "the two selector spellings differ"

# 7. compare on a flent file.
expect_error 2 "k.flent.gz: a gzip file (flent's .flent.gz data file?), not a nicsim results file" \
  "$nicsim" compare k.flent.gz
expect_error 2 "not a nicsim results file" "$nicsim" plot k.flent.gz -o x.svg
echo "cli_options: ok"
