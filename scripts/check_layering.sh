#!/usr/bin/env bash
# Layering check: holds the sources to the dependency direction of docs/architecture.md
# ("Targets and dependency direction"), with a ratchet of the violations known today.
#
#   bash scripts/check_layering.sh [-v] [--keys] [ROOT]        (ROOT defaults to ".")
#
# Exit 0 when every violation found is listed in ROOT/tests/layering_allowlist.txt and every entry
# there still matches a violation; exit 1 on a new violation or on a stale entry (so the list only
# shrinks); exit 2 on a usage error or a tree it cannot read. Each violation is printed as
#   layering: <rule>: <file>:<line>: <include or detail>
# and is allowlisted by its key, <rule>|<file>|<include or detail>, which holds no line number.
#   -v      also print the allowlisted violations
#   --keys  print the key of every current violation, sorted, and exit 0 (to prune the allowlist)
# Needs only bash, find, grep, sed, awk (mawk is enough), sort and coreutils; takes ~0.1 s.
#
# Rules (the why of each is next to its code below):
#   1 no-sim-in-models, no-project-in-common   models/ and common/ include nothing from sim/;
#                                              common/ includes nothing from models/ either
#   2 no-systemc-in-plain          files of plain targets include no SystemC header, no header of
#                                  a SystemC model component, no header that pulls SystemC in
#   3 no-folder-cycle              no two folders include each other, directly or transitively
#   4 no-run-cli-in-report-sweep   sim/report and sim/sweep include nothing from sim/run, sim/cli
#   5 no-systemc-link              the report, sweep, JSON and chart targets link no SystemC
#   6 config-file-size             no source file under sim/config over 400 lines
#   7 counter-spread               a PhaseCounters counter (a field of it, or of a models/ struct it
#                                  holds), an EnergyBreakdown component or a summary field
#                                  (kSummaryFields) spelled in at most 4 files of models/, sim/
#   8 planner-entry-headers        sim/ includes from models/planner only its entry headers
#                                  (PLANNER_ENTRY_HEADERS below)
#   9 family-switch-default        no `default:` in a switch whose case labels name a family enum
#                                  (FAMILY_ENUMS below), so -Werror=switch names every switch a new
#                                  member misses
#
# Folders are common, models/<lib> and sim/<folder>. Includes are written relative to those roots
# ("planner/planner.h", "config/params.h", "common/errors.h"), so an include's first path
# component names its folder. Which target compiles a .cpp is read from the add_library /
# add_executable calls in common/, models/ and sim/ CMakeLists.txt. A header belongs to the target
# of its same-named .cpp; a header without one belongs to its folder, which counts as SystemC
# only if every target compiled from it is. The one fact written here by hand is which targets
# are SystemC targets (the "SystemC" column of docs/architecture.md; `fastsim` holds sc_main):
SYSTEMC_TARGETS="fastsim_array fastsim_vector_unit fastsim_node fastsim_cluster fastsim_run fastsim_output fastsim"
# Targets that must link no SystemC (rule 5); a name may be an alias (fastsim::charts).
NO_SYSTEMC_LINK_TARGETS="fastsim::results_report fastsim::sweep fastsim::charts"
CONFIG_FILE_LIMIT=400   # rule 6, lines per file under sim/config
COUNTER_FILE_LIMIT=4    # rule 7, files naming one PhaseCounters counter or summary field
# Rule 9: the enums whose members are a family (docs/architecture.md, "Where to make a change").
FAMILY_ENUMS="LayerKind|PlannerKind|Scheme|AllReduceAlgorithm|GradientSyncAlgorithm|TopologyKind"
# Rule 8: the planner headers sim/ may include.
PLANNER_ENTRY_HEADERS="planner/planner.h planner/layer_graph.h planner/plan_decisions.h planner/plan_view.h planner/pipeline_plan.h planner/schedule.h planner/stage_level.h planner/replicas.h planner/gradient_sync.h"
set -euo pipefail
export LC_ALL=C

verbose=0 keys_only=0 root=.
while [ $# -gt 0 ]; do
  case $1 in
    -v) verbose=1 ;;
    --keys) keys_only=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "check_layering.sh: unknown option $1" >&2; exit 2 ;;
    *) root=$1 ;;
  esac
  shift
done
cd "$root" || exit 2
for d in common models sim; do
  [ -d "$d" ] || { echo "check_layering.sh: $root has no $d/ (pass the repository root)" >&2; exit 2; }
done
allowlist=tests/layering_allowlist.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- Inputs -------------------------------------------------------------------------------
# Folders, one a line: common, models/<lib>, sim/<folder>. An include root must name one folder.
{ echo common; find models sim -mindepth 1 -maxdepth 1 -type d; } | sort > "$tmp/folders"
dup=$(sed 's|.*/||' "$tmp/folders" | sort | uniq -d)
[ -z "$dup" ] || { echo "check_layering.sh: include root names more than one folder: $dup" >&2; exit 2; }

# Every include line of the sources, as file:line:text, in file and line order.
grep -rnHE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' --include='*.in' \
  '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' common models sim \
  | sort -t: -k1,1 -k2,2n > "$tmp/includes" || true

# The CMake calls that matter, one record a line:
#   T <target>                    a target declared by add_library / add_executable
#   S <source path> <target>      a source file of a target
#   A <alias> <target>            add_library(<alias> ALIAS <target>)
#   L <target> <file> <line> <item>   one item of target_link_libraries
# shellcheck disable=SC2016  # ${...} below is CMake text for awk, not shell
find common models sim -name CMakeLists.txt | sort | xargs awk '
  function finish(   n, t, i, dir, tok) {
    n = split(buf, t, /[ \t]+/)
    if (t[1] == "") { for (i = 1; i < n; i++) t[i] = t[i + 1]; n-- }
    if (cmd == "target_link_libraries") {
      for (i = 2; i <= n; i++)
        if (t[i] !~ /^(PUBLIC|PRIVATE|INTERFACE|LINK_PUBLIC|LINK_PRIVATE|LINK_INTERFACE_LIBRARIES)$/ && t[i] != "")
          print "L", t[1], FILENAME, start, t[i]
      return
    }
    if (t[2] == "ALIAS") { print "A", t[1], t[3]; return }
    print "T", t[1]
    dir = FILENAME; sub(/\/?CMakeLists\.txt$/, "", dir)
    for (i = 2; i <= n; i++) {
      tok = t[i]
      if (tok ~ /^(STATIC|SHARED|MODULE|OBJECT|INTERFACE|IMPORTED|GLOBAL|EXCLUDE_FROM_ALL|WIN32|MACOSX_BUNDLE)$/ || tok == "") continue
      if (tok ~ /BINARY_DIR|\$</) continue                      # generated sources
      sub(/^\$\{CMAKE_CURRENT_SOURCE_DIR\}\//, dir "/", tok)
      sub(/^\$\{(PROJECT|CMAKE)_SOURCE_DIR\}\//, "", tok)
      if (tok ~ /\$\{/) continue
      if (tok !~ /^(common|models|sim)\//) tok = dir "/" tok
      print "S", tok, t[1]
    }
  }
  { sub(/#.*/, "") }
  !incmd && match($0, /(^|[^A-Za-z0-9_])(add_library|add_executable|target_link_libraries)[ \t]*\(/) {
    cmd = substr($0, RSTART, RLENGTH); sub(/^[^A-Za-z]/, "", cmd); sub(/[ \t]*\($/, "", cmd)
    buf = substr($0, RSTART + RLENGTH); start = FNR; incmd = 1
  }
  incmd && FNR != start { buf = buf " " $0 }
  incmd && index(buf, ")") { buf = substr(buf, 1, index(buf, ")") - 1); finish(); incmd = 0 }
' > "$tmp/cmake"

# --- Rules 1-5: includes, folder graph, links ------------------------------------------------
# Each violation goes to $tmp/violations as: key <TAB> message.
awk -v sc_targets="$SYSTEMC_TARGETS" -v nolink_targets="$NO_SYSTEMC_LINK_TARGETS" -v planner_entries="$PLANNER_ENTRY_HEADERS" \
    -v folders="$tmp/folders" -v cmake="$tmp/cmake" '
  function folder_of(p,   a) { split(p, a, "/"); return a[1] == "common" ? "common" : a[1] "/" a[2] }
  function target_of(p,   stem) {                  # "" when no CMake call names it
    if (p in tgt) return tgt[p]
    stem = p; if (!sub(/\.(h|hpp)$/, "", stem)) return ""
    if ((stem ".cpp") in tgt) return tgt[stem ".cpp"]
    if ((stem ".cc") in tgt) return tgt[stem ".cc"]
    return ""
  }
  function is_systemc(p,   t, f) {
    t = target_of(p); if (t != "") return (t in SC)
    f = folder_of(p); return (ntargets[f] > 0 && nplain[f] == 0)
  }
  function owner(p,   t) { t = target_of(p); return t != "" ? t : "folder " folder_of(p) }
  function violation(key, msg) { printf "%s\t%s\n", key, msg }
  function resolve(name) { while (name in alias) name = alias[name]; return name }
  # Shortest folder path a -> b, each step with the first include that makes it.
  function path(a, b,   q, head, tail, seen, par, x, y, out) {
    head = tail = 1; q[1] = a; seen[a] = 1
    while (head <= tail && !(b in seen)) {
      x = q[head++]
      for (y in node) if ((x, y) in edge && !(y in seen)) { seen[y] = 1; par[y] = x; q[++tail] = y }
    }
    out = ""
    for (y = b; y != a; y = par[y]) out = " -> " y " (" edge[par[y], y] ")" out
    return a out
  }
  BEGIN {
    n = split(sc_targets, t, " "); for (i = 1; i <= n; i++) SC[t[i]] = 1
    n = split(planner_entries, t, " "); for (i = 1; i <= n; i++) planner_entry[t[i]] = 1
    while ((getline line < folders) > 0) { r = line; sub(/.*\//, "", r); root_of[r] = line }
    while ((getline line < cmake) > 0) {
      split(line, f, " ")
      if (f[1] == "T") declared[f[2]] = 1
      else if (f[1] == "S") {
        tgt[f[2]] = f[3]; d = folder_of(f[2])
        if (!((d, f[3]) in seen_dt)) { seen_dt[d, f[3]] = 1; ntargets[d]++; if (!(f[3] in SC)) nplain[d]++ }
      } else if (f[1] == "A") alias[f[2]] = f[3]
      else if (f[1] == "L") { nl++; lt[nl] = f[2]; lfile[nl] = f[3]; lline[nl] = f[4]; litem[nl] = f[5] }
    }
  }
  {
    # file:line:#include "x/y.h"
    file = $0; sub(/:.*/, "", file); rest = substr($0, length(file) + 2)
    ln = rest; sub(/:.*/, "", ln); text = substr(rest, length(ln) + 2)
    if (!match(text, /[<"][^>"]*[>"]/)) next
    shown = substr(text, RSTART, RLENGTH); inc = substr(shown, 2, RLENGTH - 2)
    from = folder_of(file)
    to = ""; if (index(inc, "/")) { r = substr(inc, 1, index(inc, "/") - 1); if (r in root_of) to = root_of[r] }
    header = (to == "" ? "" : (to == "common" ? inc : substr(to, 1, index(to, "/")) inc))
    loc = file ":" ln

    # Rule 1: the models and the common library stand below sim/ (config, runs, reports, CLI);
    # common is the bottom library (std only), so it includes no other fastsim folder.
    if (from ~ /^models\// && to ~ /^sim\//)
      violation("no-sim-in-models|" file "|" inc, "no-sim-in-models: " loc ": " shown)
    if (from == "common" && to != "" && to != "common")
      violation("no-project-in-common|" file "|" inc, "no-project-in-common: " loc ": " shown)

    # Rule 8: sim/ reaches the planner through its entry headers only (what a plan is, how it is
    # made, read back, walked and lowered), so the internals of the planner (pipeline.h, hierarchy.h,
    # replicas.h, ...) change without touching the composition root.
    if (from ~ /^sim\// && to == "models/planner" && !(inc in planner_entry))
      violation("planner-entry-headers|" file "|" inc, "planner-entry-headers: " loc ": " shown)

    # Rule 2: plain targets build and test without SystemC; a SystemC header, or the header of a
    # SystemC model component, in one of their files would drag the kernel in. (Headers that
    # pull SystemC in further down are checked in END.)
    sysc = (inc == "systemc" || inc == "systemc.h" || inc ~ /^tlm/ || inc ~ /^sysc\//)
    if (sysc && !(file in sc_via)) sc_via[file] = shown
    direct = 0
    if (!is_systemc(file) && (sysc || (header ~ /^models\// && is_systemc(header)))) {
      direct = 1
      violation("no-systemc-in-plain|" file "|" inc,
                "no-systemc-in-plain: " loc ": " shown " (in " owner(file) ", not a SystemC target)")
    }
    if (header != "") { nr++; rfile[nr] = file; rheader[nr] = header; rinc[nr] = inc; rloc[nr] = loc; rshown[nr] = shown; rdirect[nr] = direct }

    # Rule 4: the results report and the sweep runner read and write files; they must not need
    # the simulator (sim/run) or the command line (sim/cli) that drive them.
    if ((from == "sim/report" || from == "sim/sweep") && (to == "sim/run" || to == "sim/cli"))
      violation("no-run-cli-in-report-sweep|" file "|" inc, "no-run-cli-in-report-sweep: " loc ": " shown)

    # Rule 3 input: the folder graph, keeping the first include behind each edge.
    if (to != "" && to != from) {
      node[from] = node[to] = 1
      if (!((from, to) in edge)) edge[from, to] = loc " " shown
    }
  }
  END {
    # Rule 2, transitively: a plain file must not reach SystemC through the headers it includes
    # (e.g. a sim/run header, which may use SystemC, that includes <systemc>).
    do {
      changed = 0
      for (i = 1; i <= nr; i++)
        if (!(rfile[i] in sc_via) && (rheader[i] in sc_via)) {
          sc_via[rfile[i]] = rheader[i] " -> " sc_via[rheader[i]]; changed = 1
        }
    } while (changed)
    for (i = 1; i <= nr; i++)
      if (!rdirect[i] && (rheader[i] in sc_via) && !is_systemc(rfile[i]))
        violation("no-systemc-in-plain|" rfile[i] "|" rinc[i],
                  "no-systemc-in-plain: " rloc[i] ": " rshown[i] " pulls in " sc_via[rheader[i]] \
                  " (in " owner(rfile[i]) ", not a SystemC target)")

    # Rule 3: folders that include each other (directly or through others) cannot be built,
    # tested or understood one at a time. Transitive closure (Warshall), then each pair once.
    for (a in node) for (b in node) if ((a, b) in edge) reach[a, b] = 1
    for (k in node) for (a in node) if ((a, k) in reach) for (b in node) if ((k, b) in reach) reach[a, b] = 1
    for (a in node) for (b in node)
      if (a < b && ((a, b) in reach) && ((b, a) in reach))
        violation("no-folder-cycle|" a "|" b,
                  "no-folder-cycle: " a " <-> " b ": " path(a, b) "; " path(b, a))

    # Rule 5: the report, sweep, JSON and chart libraries must link no SystemC target. Only direct
    # links are checked: what a linked target links in turn (e.g. fastsim::config, which links
    # plain model libraries only) is a gray area this check leaves alone.
    n = split(nolink_targets, t, " ")
    for (i = 1; i <= n; i++) {
      name = resolve(t[i])
      if (!(name in declared) && t[i] ~ /^fastsim_/) name = resolve("fastsim::" substr(t[i], 9))
      if (!(name in declared)) { printf "layering: note: %s is not a target here; rule 5 skips it\n", t[i] > "/dev/stderr"; continue }
      if (name in checked) continue
      checked[name] = 1
      for (j = 1; j <= nl; j++) {
        if (resolve(lt[j]) != name) continue
        item = resolve(litem[j])
        if ((item in SC) || tolower(litem[j]) ~ /systemc/ || tolower(item) ~ /systemc/)
          violation("no-systemc-link|" lfile[j] "|" name " -> " litem[j],
                    "no-systemc-link: " lfile[j] ":" lline[j] ": " name " links " litem[j])
      }
    }
  }
' "$tmp/includes" > "$tmp/violations"

# --- Rule 6: sim/config stays small ---------------------------------------------------------
# The config layer is parsing and validation; a file over the limit mixes concerns (sections,
# resolution, dumping) that should be split along the YAML sections.
find sim/config -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' -o -name '*.in' \) \
  | sort | while read -r f; do
    n=$(wc -l < "$f")
    if [ "$n" -gt "$CONFIG_FILE_LIMIT" ]; then
      printf 'config-file-size|%s|over %s lines\tconfig-file-size: %s:%s: %s lines (limit %s)\n' \
        "$f" "$CONFIG_FILE_LIMIT" "$f" $((CONFIG_FILE_LIMIT + 1)) "$n" "$CONFIG_FILE_LIMIT"
    fi
  done >> "$tmp/violations"

# --- Rule 9: family switches have no default ----------------------------------------------
# A `default:` directly inside a switch whose case labels name a family enum (FAMILY_ENUMS):
# with none, -Werror=switch names every switch a new member misses. Strings and // comments are
# blanked first, and the text between braces is checked at its depth, so one-line switches count.
find models sim -name '*.cpp' -o -name '*.h' | sort | xargs awk -v families="$FAMILY_ENUMS" '
FNR == 1 { depth = 0; n = 0; pending = 0 }
{
  line = $0
  gsub(/\\./, "", line)                 # escapes, so quotes inside strings do not end them
  gsub(/"[^"]*"/, "\"\"", line)        # string literals
  gsub(/\047[^\047]*\047/, "\047\047", line)          # character literals
  sub(/\/\/.*/, "", line)
  rest = line
  while (1) {
    if (match(rest, /[{}]/)) { seg = substr(rest, 1, RSTART - 1); brace = substr(rest, RSTART, 1); rest = substr(rest, RSTART + 1) }
    else { seg = rest; brace = ""; rest = "" }
    if (seg ~ /(^|[^A-Za-z0-9_])switch[ \t]*\(/) pending = 1
    if (n > 0 && depth == body[n]) {
      if (seg ~ /(^|[^A-Za-z0-9_])default[ \t]*:/ && !dflt[n]) dflt[n] = FNR
      if (seg ~ ("case[ \t]+([A-Za-z0-9_]+::)*(" families ")::")) fam[n] = 1
    }
    if (brace == "{") {
      depth++
      if (pending) { n++; body[n] = depth; dflt[n] = 0; fam[n] = 0; pending = 0 }
    } else if (brace == "}") {
      if (n > 0 && depth == body[n]) {
        if (dflt[n] && fam[n]) printf "family-switch-default|%s|default\tfamily-switch-default: %s:%d: a default: in a switch over a family enum hides a missed member\n", FILENAME, FILENAME, dflt[n]
        n--
      }
      depth--
    } else break
  }
}
' >> "$tmp/violations"

# --- Rule 7: one counter, few spellings -----------------------------------------------------
# Every counter of node::PhaseCounters that is spelled out in many files (summing, printing, CSV
# and JSON columns, energy) makes adding a counter a shotgun edit; past the limit it belongs in
# one table that the others iterate. The counters are PhaseCounters' data members and, through
# members whose type is a struct declared in a models/ header (the array's, the converter's and
# the memory traffic's counters), that struct's data members, at any depth. Only names with an
# underscore are counted: a one-word field (cycles, tiles, folds, macs, conversion) is an
# ordinary word elsewhere in the code, and its file count says nothing about the counter.

# The header under models/ that declares struct $1 (first in path order), or nothing.
struct_header() {
  grep -rlE --include='*.h' "struct[[:space:]]+$1([[:space:]]|\{|\$)" models | sort | head -n 1 || true
}
# The data members of struct $2 in header $1, one "name type" a line: declarations at depth 1 of
# the struct body, without parentheses.
struct_members() {
  awk -v name="$2" '
    !inside && $0 ~ ("struct[ \t]+" name "([ \t]|\\{|$)") { inside = 1; depth = 0 }
    inside {
      s = $0; sub(/\/\/.*/, "", s); gsub(/\/\*[^*]*\*\//, "", s)
      if (depth == 1 && s ~ /;[ \t]*$/ && s !~ /[()]/ &&
          s !~ /^[ \t]*(using|static|friend|typedef|enum|struct|class|template)[ \t]/) {
        d = s; gsub(/\{[^}]*\}/, "", d); gsub(/=[^,;]*/, "", d); sub(/;[ \t]*$/, "", d)
        n = split(d, part, ","); type = ""
        for (i = 1; i <= n; i++) {
          p = part[i]; gsub(/\[[^]]*\]/, "", p); sub(/[ \t]+$/, "", p)
          if (!match(p, /[A-Za-z_][A-Za-z0-9_]*$/)) continue
          member = substr(p, RSTART, RLENGTH)
          if (i == 1) { type = substr(p, 1, RSTART - 1); gsub(/^[ \t]+|[ \t]+$/, "", type) }
          print member, type
        }
      }
      depth += gsub(/\{/, "{", s) - gsub(/\}/, "}", s)
      if (depth == 0 && index($0, "}")) exit
    }
  ' "$1"
}
pc=$(struct_header PhaseCounters)
if [ -z "$pc" ]; then
  printf 'counter-spread|PhaseCounters|struct not found\tcounter-spread: models: struct PhaseCounters not found (update rule 7)\n' \
    >> "$tmp/violations"
else
  # The structs to read, "name header" a line, in the order found: PhaseCounters, then the
  # models/ structs its members' types name, and theirs.
  printf 'PhaseCounters %s\n' "$pc" > "$tmp/structs"
  # Energy components are results declared once too (kEnergyComponents beside the struct).
  eb=$(struct_header EnergyBreakdown)
  if [ -z "$eb" ]; then
    printf 'counter-spread|EnergyBreakdown|struct not found\tcounter-spread: models: struct EnergyBreakdown not found (update rule 7)\n' \
      >> "$tmp/violations"
  else
    printf 'EnergyBreakdown %s\n' "$eb" >> "$tmp/structs"
  fi
  : > "$tmp/members"
  read_structs=0
  while [ "$read_structs" -lt "$(wc -l < "$tmp/structs")" ]; do
    read_structs=$((read_structs + 1))
    read -r name file < <(sed -n "${read_structs}p" "$tmp/structs")
    while read -r member type; do
      echo "$member" >> "$tmp/members"
      t=${type##*::}; t=${t##* }
      if [[ $t =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && ! grep -q "^$t " "$tmp/structs"; then
        h=$(struct_header "$t")
        [ -z "$h" ] || printf '%s %s\n' "$t" "$h" >> "$tmp/structs"
      fi
    done < <(struct_members "$file" "$name")
  done
  grep '_' "$tmp/members" | sort -u > "$tmp/counters" || true
  if [ -s "$tmp/counters" ]; then
    # file:name for each counter spelled as a whole word, then one line per counter over the limit.
    grep -rowE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' \
      "($(paste -sd'|' "$tmp/counters"))" models sim | sort -u \
      | awk -F: -v limit="$COUNTER_FILE_LIMIT" '
          { n[$2]++; files[$2] = files[$2] " " $1 }
          END { for (c in n) if (n[c] > limit)
                  printf "counter-spread|PhaseCounters|%s\tcounter spelled in %d files (limit %d): %s:%s\n", c, n[c], limit, c, files[c] }
        ' | sort >> "$tmp/violations" || true
  fi
fi

# Summary fields are results declared once as well: kSummaryFields in common/summary.h names
# them, summary.json and results.csv are written from those names, and the report page reads
# their titles from it. A field spelled out by hand in many files of models/ and sim/ belongs in
# that list's walk instead. As above, only names with an underscore are counted (cycles, macs
# are ordinary words).
summary_header=common/summary.h
if ! grep -q 'kSummaryFields' "$summary_header" 2>/dev/null; then
  printf 'counter-spread|kSummaryFields|list not found\tcounter-spread: %s: kSummaryFields not found (update rule 7)\n' \
    "$summary_header" >> "$tmp/violations"
else
  # The "name" of each {"name", "title", ...} row between `kSummaryFields{{` and `}};`.
  awk '/kSummaryFields\{\{/ { inside = 1; next } inside && /^\}\};/ { exit }
       inside && match($0, /\{"[A-Za-z0-9_]+"/) { print substr($0, RSTART + 2, RLENGTH - 3) }' \
    "$summary_header" | grep '_' | sort -u > "$tmp/summary_fields" || true
  if [ ! -s "$tmp/summary_fields" ]; then
    printf 'counter-spread|kSummaryFields|no fields read\tcounter-spread: %s: no field of kSummaryFields read (update rule 7)\n' \
      "$summary_header" >> "$tmp/violations"
  else
    grep -rowE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' \
      "($(paste -sd'|' "$tmp/summary_fields"))" models sim | sort -u \
      | awk -F: -v limit="$COUNTER_FILE_LIMIT" '
          { n[$2]++; files[$2] = files[$2] " " $1 }
          END { for (c in n) if (n[c] > limit)
                  printf "counter-spread|kSummaryFields|%s\tsummary field spelled in %d files (limit %d): %s:%s\n", c, n[c], limit, c, files[c] }
        ' | sort >> "$tmp/violations" || true
  fi
fi

# --- Verdict --------------------------------------------------------------------------------
sort -u -o "$tmp/violations" "$tmp/violations"
if [ "$keys_only" = 1 ]; then cut -f1 "$tmp/violations" | sort -u; exit 0; fi
touch "$tmp/allow"
[ -f "$allowlist" ] && sed -e 's/[[:space:]]*$//' -e '/^#/d' -e '/^$/d' "$allowlist" > "$tmp/allow"
awk -F'\t' -v verbose="$verbose" -v allowfile="$tmp/allow" '
  BEGIN { while ((getline k < allowfile) > 0) allow[k] = 1 }
  { found[$1] = 1; total++
    if ($1 in allow) { allowed++; if (verbose) print "layering: (allowlisted) " $2 }
    else { fresh++; print "layering: " $2 } }
  END {
    for (k in allow) if (!(k in found)) { stale++; print "layering: allowlist entry no longer needed: " k }
    printf "layering: %d violation(s): %d allowlisted, %d new; %d stale allowlist entr%s\n",
      total, allowed, fresh, stale, (stale == 1 ? "y" : "ies")
    if (fresh) print "layering: fix the new violations; never add them to tests/layering_allowlist.txt"
    if (stale) print "layering: delete the stale entries from tests/layering_allowlist.txt"
    exit (fresh || stale) ? 1 : 0
  }
' "$tmp/violations"
