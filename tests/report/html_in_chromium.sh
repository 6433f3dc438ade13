#!/usr/bin/env bash
# Renders `fastsim report` pages in headless Chromium and checks what the browser shows.
#
#   bash tests/report/html_in_chromium.sh FASTSIM SOURCE_DIR WORK_DIR
#
# 1. Installs Debian's chromium if it is missing (as scripts/setup.sh installs its packages).
# 2. Makes two reports: the 20-point fixture sweep (tests/data/sweeps/resnet18_array_precision)
#    and a real run directory (`fastsim run configs/tests/tiny_node.yaml --out`).
# 3. Loads each with `chromium --headless --dump-dom` (network blocked, fresh profile) and checks:
#    - the page has no console messages at all: the pages carry no JavaScript, so any line
#      Chromium logs from the page (":CONSOLE", "Uncaught") is an error. A control page with a
#      deliberate script error must produce such a line, or the check would prove nothing;
#    - the rendered DOM holds the expected numbers, computed here from results.csv, point.json
#      and report.json with the page's display rule, not copied from the page;
#    - the SVG charts are in the DOM (svg, line markers, bar segments);
#    - the HTML refers to nothing outside itself (no src=, no http(s) href, no url(), no @import).
set -euo pipefail

fastsim=$1
source_dir=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  for attempt in 1 2 3; do  # another apt may hold the lists lock for a while
    $sudo apt-get update -qq && break
    [[ $attempt -lt 3 ]] || fail "apt-get update failed"
    sleep 20
  done
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 chromium >&2
fi
chromium --version >&2

# Dumps the DOM of FILE into FILE.dom and Chromium's log into FILE.log.
render() {
  local file=$1 profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  HOME="$work" timeout 180 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
    --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 --dump-dom "file://$file" \
    >"$file.dom" 2>"$file.log" || fail "chromium exited with status $? on $file (log: $file.log)"
  grep -q '</html>' "$file.dom" || fail "no DOM dumped for $file"
}

# Lines Chromium logs for messages from the page: console calls and uncaught exceptions.
page_messages() { grep -E ':CONSOLE|Uncaught' "$1.log" || true; }

# The page's number display rule (report/html_page.h, display_number): integers in full,
# 10^5 <= |v| < 10^15 with one decimal, everything else %.6g.
display() {
  awk -v v="$1" 'BEGIN { v += 0; a = v < 0 ? -v : v; r = sprintf("%.0f", v);
    if (a < 1e15 && r + 0 == v) s = r; else if (a >= 1e5 && a < 1e15) s = sprintf("%.1f", v); else s = sprintf("%.6g", v);
    if (s == "-0") s = "0"; print s }'
}

# How often TEXT occurs in FILE (0 without failing under pipefail).
occurrences() { { grep -oF -- "$1" "$2" || true; } | wc -l; }

expect_in_dom() {  # FILE TEXT WHAT
  grep -qF -- "$2" "$1.dom" || fail "$3: '$2' is not in the rendered page $1"
}

self_contained() {
  local file=$1
  if grep -nE '(src|href)[[:space:]]*=[[:space:]]*["'"'"']?(https?:)?//|url\(|@import' "$file"; then
    fail "$file refers to resources outside itself (lines above)"
  fi
}

# 2. The control: a page with a script error must show up in the log.
printf '<!DOCTYPE html><html><body><p>control</p><script>undefinedFunctionForTheControl();</script></body></html>\n' >"$work/control.html"
render "$work/control.html"
grep -q 'undefinedFunctionForTheControl' <(page_messages "$work/control.html") ||
  fail "chromium did not report the control page's script error; the no-error check cannot be trusted (log: $work/control.html.log)"

# 3. The fixture sweep.
cp -r "$source_dir/tests/data/sweeps/resnet18_array_precision" "$work/sweep"
"$fastsim" report "$work/sweep" >/dev/null
page="$work/sweep/report.html"
self_contained "$page"
render "$page"
messages=$(page_messages "$page")
[[ -z $messages ]] || fail "the sweep page logged messages: $messages"
csv="$work/sweep/results.csv"
header=$(head -1 "$csv")
col() { tr ',' '\n' <<<"$header" | grep -nx "$1" | cut -d: -f1; }
c_point=$(col point); c_status=$(col status); c_cycles=$(col cycles); c_energy=$(col energy_uj)
c_pj=$(col pj_per_mac); c_util=$(col utilisation_percent)
ok=0 failed=0
# Split on commas: fine for this fixture, whose only quoted cells (errors) come after the columns read.
while IFS=, read -r -a cells; do
  point=${cells[c_point - 1]}
  expect_in_dom "$page" "<td>$point</td>" "point $point"
  if [[ ${cells[c_status - 1]} != ok ]]; then
    failed=$((failed + 1))
    # The error from point.json, as the browser serialises text: JSON \" and \\ undone, & < > escaped.
    error=$(sed -n 's/^ *"error": "\(.*\)",\{0,1\}$/\1/p' "$work/sweep/points/$point/point.json" |
      sed 's/\\"/"/g; s/\\\\/\\/g; s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')
    [[ -n $error ]] || fail "no error in $work/sweep/points/$point/point.json"
    expect_in_dom "$page" "$error" "error of failed point $point"
    continue
  fi
  ok=$((ok + 1))
  for c in $c_cycles $c_energy $c_pj $c_util; do
    expect_in_dom "$page" "<td class=\"num\">$(display "${cells[c - 1]}")</td>" "point $point, $(cut -d, -f"$c" <<<"$header")"
  done
done < <(tail -n +2 "$csv")
[[ $ok -eq 18 && $failed -eq 2 ]] || fail "expected 18 ok and 2 failed points in the fixture, read $ok and $failed"
expect_in_dom "$page" "$ok ok, $failed failed" "point counts"
svgs=$(occurrences '<svg ' "$page.dom")
[[ $svgs -eq 5 ]] || fail "expected 5 inline SVG charts in the sweep page, found $svgs"
markers=$(occurrences 'class="marker"' "$page.dom")
[[ $markers -eq $((4 * ok)) ]] || fail "expected $((4 * ok)) line markers (4 plots x $ok points), found $markers"
segments=$(occurrences 'class="segment"' "$page.dom")
[[ $segments -eq $((5 * ok)) ]] || fail "expected $((5 * ok)) bar segments (5 components x $ok points), found $segments"

# 4. A real run directory.
"$fastsim" run "$source_dir/configs/tests/tiny_node.yaml" --out "$work/run" >/dev/null
"$fastsim" report "$work/run" >/dev/null
page="$work/run/report.html"
self_contained "$page"
render "$page"
messages=$(page_messages "$page")
[[ -z $messages ]] || fail "the run page logged messages: $messages"
json="$work/run/report.json"
member() { sed -n "s/^ *\"$1\": \([-0-9.e+]*\),\{0,1\}$/\1/p" "$json"; }
cycles=$(member total_cycles); energy_pj=$(member total_energy_pj); pj=$(member pj_per_mac); util=$(member utilisation_percent)
[[ -n $cycles && -n $energy_pj && -n $pj && -n $util ]] || fail "could not read the totals from $json"
expect_in_dom "$page" "<td class=\"num\">$(display "$cycles")</td>" "total cycles"
expect_in_dom "$page" "<td class=\"num\">$(display "$(awk -v v="$energy_pj" 'BEGIN { printf "%.17g", v * 1e-6 }')")</td>" "energy in uJ"
expect_in_dom "$page" "<td class=\"num\">$(display "$pj")</td>" "pJ per MAC"
expect_in_dom "$page" "<td class=\"num\">$(display "$util")</td>" "utilisation"
layers=0
while IFS=, read -r layer phase _; do
  layers=$((layers + 1))
  expect_in_dom "$page" "<td>${layer//\"/}</td><td>${phase//\"/}</td>" "layers.csv row $layers"
done < <(tail -n +2 "$work/run/layers.csv")
[[ $layers -gt 0 ]] || fail "layers.csv has no rows"
bars=$(occurrences 'class="bar"' "$page.dom")
distinct=$(tail -n +2 "$work/run/layers.csv" | cut -d, -f1 | sort -u | wc -l)
# Two charts of one bar per layer: energy by component, and cycles by where they went.
[[ $bars -eq $((2 * distinct)) ]] || fail "expected one energy and one cycles bar per layer (2 x $distinct), found $bars"

echo "ok: sweep ($ok ok, $failed failed points) and run ($layers layer rows) pages render without messages and show their numbers"
