#!/usr/bin/env bash
# `nicsim plot` for papers (CTest: cli_plot_paper; issue 15 item 5): PDF and EPS through
# gnuplot's pdfcairo / epscairo (Debian gnuplot-nox), --title, --size (pixels for png, inches
# or cm for pdf/eps), --font, Paul Tol's palette and legends outside the data in the script,
# --keep-script leaving a script that gnuplot reruns by itself; bad values are usage errors.
# Usage: plot_paper_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
command -v gnuplot >/dev/null || fail "gnuplot not installed (run scripts/setup.sh)"
cd "$work"
"$nicsim" run s.toml --json r.json --quiet >/dev/null

# PDF: 3.5 x 2.2 inches is a 252 x 158.4 pt page (cairo writes whole points: 252 x 158).
"$nicsim" plot r.json --run bql=false -o t.pdf --title "BQL off" --size 3.5in,2.2in \
  --font "Helvetica,9" 2>/dev/null || fail "pdf plot"
head -c 5 t.pdf | grep -q '^%PDF-' || fail "t.pdf is not a PDF"
grep -aq 'MediaBox \[ *0 0 252 158' t.pdf || fail "t.pdf: page is not 3.5in x 2.2in: $(grep -ao 'MediaBox[^]]*' t.pdf)"
# EPS in cm: 9 x 6 cm = 255 x 170 pt.
"$nicsim" plot r.json --run bql=true --kind cdf -o c.eps --size 9cm,6cm 2>/dev/null || fail "eps plot"
head -1 c.eps | grep -q '^%!PS-Adobe-3.0 EPSF-3.0' || fail "c.eps is not EPS"
grep -q '^%%BoundingBox: 0 0 25[56] 170' c.eps || fail "c.eps: $(grep BoundingBox c.eps)"
# PNG with a pixel size.
"$nicsim" plot r.json --run bql=false -o s.png --size 640,400 2>/dev/null || fail "png plot"
$py - s.png <<'PY' || fail "s.png is not 640x400"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert struct.unpack(">II", b[16:24]) == (640, 400)
PY

# --keep-script: the script and data stay; they carry the options, the palette and the key
# placement; gnuplot alone draws the picture again from them.
"$nicsim" plot r.json r.json --kind compare -o k.pdf --keep-script kept --title "sim twice" \
  --font "Times,8" 2>/dev/null || fail "keep-script plot"
[ -f kept/plot.gp ] && [ -f kept/compare.dat ] || fail "--keep-script left: $(ls kept)"
grep -q "^set title 'sim twice'" kept/plot.gp || fail "kept script lacks the title"
grep -q "font 'Times,8'" kept/plot.gp || fail "kept script lacks the font"
grep -q "^set linetype 1 lc rgb '#1965B0'" kept/plot.gp || fail "kept script lacks Tol's palette"
grep -q "^set key outside" kept/plot.gp || fail "kept script puts the legend inside"
rm k.pdf
gnuplot kept/plot.gp || fail "gnuplot kept/plot.gp failed"
head -c 5 k.pdf | grep -q '^%PDF-' || fail "rerunning the kept script drew no PDF"

# Usage errors: one line, exit 2 (common.sh).
expect_usage_error "--size: expected W,H in pixels" "$nicsim" plot r.json --run bql=false -o x.png --size 5in,3in
expect_usage_error "--size: expected W,H in inches or cm" "$nicsim" plot r.json --run bql=false -o x.pdf --size big
expect_usage_error "must end in .png, .svg, .pdf or .eps" "$nicsim" plot r.json -o x.gif
[ ! -e x.png ] && [ ! -e x.pdf ] || fail "a refused plot wrote a file"
echo "plot_paper_test: ok"
