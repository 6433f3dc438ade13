#!/usr/bin/env bash
# Docs check (CTest `docs.names_exist`, label docs; docs/testing.md, "The docs check"): what
# README.md and docs/*.md name must exist, so a rename or a removed option fails a test instead
# of leaving a stale page.
#
#   bash scripts/check_docs.sh ROOT FASTSIM [-v]
#
# ROOT is the repository root, FASTSIM the built binary (CTest passes $<TARGET_FILE:fastsim>).
# Exit 0 when every check passes, 1 when any fails (one line per finding:
# `docs: FILE:LINE: what`), 2 on a usage error. -v also prints what was checked.
# Needs bash, find, grep, sed, sort, coreutils and awk (mawk is enough). A few seconds.
#
# What a doc says is split into prose, inline code spans (`...`, joined across line breaks) and
# code blocks (fenced, or indented by 4 spaces after a blank line). The checks:
#
# 1 paths     A path into the repository must exist: in a span, a code line or prose, any word
#             starting with one of the top-level folders (models/ sim/ common/ tests/ configs/
#             traces/ docs/ scripts/), e.g. `sim/run/cluster_step.cpp`, configs/cluster/,
#             `models/node/node_model.{h,cpp}` (braces are expanded, `*` and <name> are globs;
#             a component in CAPITALS, `traces/accpar/NETWORK.yaml`, is a placeholder when no
#             file has that name); a span that is one file name with a source or doc extension
#             (`strategy.h`, `test_planner.cpp`, `setup.sh`, `papers.md`) must be the name of a
#             file somewhere in the repository, and so must a bare *.md name in prose; every
#             relative Markdown link [text](target) must exist relative to its doc, and its
#             #anchor must be a heading of the target (GitHub's slugs). Nothing may point at
#             shared/ or ../shared (design notes outside the repository).
# 2 symbols   A span that is written as a C++ name must be a word of the C++ sources (*.h,
#             *.cpp, *.cpp.in under models/ sim/ common/ tests/, comments left out, so a name
#             that survives only in a stale comment does not count). A span is a C++ name when it
#             is one token, optionally followed by an argument list `(...)`, made of identifiers
#             joined by `::`, and it is
#               - qualified, `Foo::bar`, `planner::make_plan` (every component is checked;
#                 `std::`, `YAML::`, `boost::` names are not ours and are skipped; `fastsim::x`
#                 is a CMake target and must be an add_library name or ALIAS in a CMakeLists.txt),
#               - called, `snake_case(...)`, `load()`,
#               - CamelCase with at least two humps, `PlanLayer`, `NodeId` (a capital, then a
#                 lower-case letter or digit, then another capital), or
#               - a constant `kSomething`.
#             Plain lower-case words and snake_case without `::` or parentheses are not checked:
#             they are as often YAML keys (`bandwidth_gb_per_s`), CSV columns (`sync_comm_s`,
#             some composed at run time: `energy_sram_uj`), enum values (`data_parallel`) or
#             English as functions. Names of other programs' code a page writes in code style
#             (SCALE-Sim's, AccPar's, ONNX operators) are listed on that page in a comment
#             `<!-- docs-check: not-ours NAME ... -->` and skipped there (also by rule 1).
#             Spans with spaces are not names, except:
# 3 tests     A span that names a Catch2 test must be the name of a TEST_CASE or
#             TEST_CASE_METHOD under tests/ (a name cut short ends in " …"). A span names a test
#             when it has a space and comes right after `›` (file › `name`), after "Test:",
#             "Tests:", "test" or "`test_x.cpp`):", or after another test name and a `,`, `;` or
#             "and".
# 4 commands  In a span or a code line, a `fastsim` (or .../fastsim) that is run (first in its
#             command, after |, && or, in code, ;, or behind a prompt $ and wrappers such as
#             time, taskset -c 0, mpirun -n 3, VAR=value; not an argument of another program,
#             `bash run.sh build/fastsim`, nor prose, "the most fastsim reads"): the word after it
#             is a subcommand if it is lower case, and `FASTSIM SUB --help` must exit 0. Every
#             -x or --flag after it (up to |, ;, &&, >, #, or the end of a quoted string) must
#             appear in `FASTSIM SUB --help` or the global --help. A span that is a lone --flag
#             must appear in some subcommand's --help (--help, --version and --log-level are
#             global), unless the lines around it name another program (OTHER_TOOLS below: ctest,
#             cmake, mpirun, Chromium, a *.sh or *.py script).
# 5 figures   `<!-- figure: CMD -->` on its own line makes the next non-blank line a quoted
#             figure: CMD is run from ROOT (a leading `fastsim` or `build/fastsim` is FASTSIM)
#             and must exit 0, and every number on that line with a decimal point or at least
#             3 digits (a whole token: 120085742, 50.655, 39.5%) must appear in its output.
#             Figures that depend on wall-clock time are never marked; the docs write
#             "timing-dependent" next to them.
set -uo pipefail

usage() { echo "usage: bash scripts/check_docs.sh ROOT FASTSIM [-v]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
root=$(cd "$1" 2>/dev/null && pwd) || usage
bin=$2
verbose=${3:-}
[[ $bin == /* ]] || bin="$PWD/$bin"
[[ -x $bin ]] || { echo "check_docs: no executable fastsim at $bin" >&2; exit 2; }
cd "$root" || exit 2
export LC_ALL=C.UTF-8

TOP_FOLDERS='models|sim|common|tests|configs|traces|docs|scripts'
SOURCE_EXTS='h|cpp|sh|py|md|cmake|in'
OTHER_TOOLS='ctest|cmake|mpirun|Catch2|libFuzzer|ninja|g\+\+|clang|Chromium|chromium|hyperfine|[A-Za-z0-9_]+\.(sh|py)'

work=$(mktemp -d "${TMPDIR:-/tmp}/check_docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
finding() { echo "docs: $1: $2"; fail=1; }
note() { [[ $verbose == -v ]] && echo "ok: $1" || true; }

docs=(README.md)
for f in docs/*.md; do docs+=("$f"); done

# --- indexes -------------------------------------------------------------------------------------
# Every file and folder of the repository (not the build trees, not .git).
find . \( -name .git -o -name 'build*' -o -name .mirror \) -prune -o -print | sed 's#^\./##' | sort > "$work/files"
sed 's#.*/##' "$work/files" | sort -u > "$work/basenames"
# Every word of the C++ sources.
find models sim common tests -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cpp.in' \) -print0 |
    xargs -0 cat | sed -E 's#(^|[^:"])//.*$#\1#' | grep -ohE '[A-Za-z_][A-Za-z0-9_]*' | sort -u > "$work/idents"
# CMake target names (add_library names and aliases).
find . \( -name .git -o -name 'build*' \) -prune -o -name CMakeLists.txt -print0 |
    xargs -0 grep -ohE '(add_library|add_executable)\([A-Za-z0-9_:]+( +ALIAS +[A-Za-z0-9_:]+)?' |
    sed -E 's/.*\(//; s/ +ALIAS +/\n/' | sort -u > "$work/targets"
# Catch2 test names.
find tests -name '*.cpp' -print0 | xargs -0 grep -ohE 'TEST_CASE(_METHOD)?\(([^,"]*, *)?"([^"\\]|\\.)*"' |
    sed -E 's/^[^"]*"//; s/"$//; s/\\"/"/g' | sort -u > "$work/tests"
# Each subcommand's --help (and the global one).
"$bin" --help > "$work/help._global" 2>&1
for c in $(awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' "$work/help._global"); do
    "$bin" "$c" --help > "$work/help.$c" 2>&1
done
cat "$work"/help.* > "$work/help._all"
# The same as associative arrays, for lookups without a process each.
declare -A IDENT BASENAME TARGET TESTNAME
while IFS= read -r x; do IDENT[$x]=1; done < "$work/idents"
while IFS= read -r x; do [[ -n $x ]] && BASENAME[$x]=1; done < "$work/basenames"
while IFS= read -r x; do TARGET[$x]=1; done < "$work/targets"
while IFS= read -r x; do [[ -n $x ]] && TESTNAME[$x]=1; done < "$work/tests"
shopt -s extglob

# GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -.
slugs_of() {
    awk '/^(```|~~~)/{f=!f} !f && /^#+ /' "$1" | sed -E 's/^#+ +//; s/ +#*$//' |
        sed -E 's/[`*]//g' | tr '[:upper:]' '[:lower:]' | sed -E 's/[^[:alnum:] _-]//g; s/ /-/g' |
        awk '{n=seen[$0]++; print (n ? $0 "-" n : $0)}'
}

# --- extraction ----------------------------------------------------------------------------------
# One record per line: FILE \t LINE \t KIND \t TEXT, KIND one of
#   span (inline code), after (a span naming a test, rule 3), link (a Markdown link target), path (a
#   prose word starting with a top folder), md (a prose *.md name), code (a code-block line,
#   continuation lines joined), figure (CMD \x1f the quoted line), shared (a line naming shared/).
extract() {
    awk -v file="$1" -v tops="$TOP_FOLDERS" '
    function out(line, kind, text) { printf "%s\t%d\t%s\t%s\n", file, line, kind, text }
    function line_at(pos,   i) { for (i = nlines; i > 1; i--) if (starts[i] <= pos) return lnos[i]; return lnos[1] }
    function flush(   rest, pos, s, before, t, re) {
        if (para == "") return
        rest = para; pos = 0
        prev = ""; prevtest = 0
        while (match(rest, /`[^`]+`/)) {
            s = substr(rest, RSTART + 1, RLENGTH - 2)
            before = substr(rest, 1, RSTART - 1)
            istest = (before ~ /› *$/ || before ~ /(^|[^A-Za-z])[Tt]ests?:? *$/ ||
                      (prev ~ /^test_[a-z_]*\.cpp$/ && before ~ /^\)?: *$/) ||
                      (prevtest && before ~ /^ *([,;]|,? and) *$/)) && s ~ / / && s !~ /\.cpp$/
            out(line_at(pos + RSTART), (istest ? "after" : "span"), s)
            prev = s; prevtest = istest
            pos += RSTART + RLENGTH - 1
            rest = substr(rest, RSTART + RLENGTH)
        }
        # prose without the spans
        t = para; gsub(/`[^`]+`/, " ", t)
        rest = t; pos = 0
        while (match(rest, /\]\([^) ]+\)/)) {
            out(line_at(pos + RSTART), "link", substr(rest, RSTART + 2, RLENGTH - 3))
            pos += RSTART + RLENGTH - 1; rest = substr(rest, RSTART + RLENGTH)
        }
        gsub(/\]\([^) ]+\)/, "] ", t)
        gsub(/https?:\/\/[^ )>]+/, " ", t)
        re = "(^|[^A-Za-z0-9_./-])(" tops ")/[A-Za-z0-9_./{},*<>+-]*"
        rest = t; pos = 0
        while (match(rest, re)) {
            s = substr(rest, RSTART, RLENGTH); sub(/^[^a-z]/, "", s)
            out(line_at(pos + RSTART), "path", s)
            pos += RSTART + RLENGTH - 1; rest = substr(rest, RSTART + RLENGTH)
        }
        rest = t; pos = 0
        while (match(rest, /(^|[^A-Za-z0-9_\/.-])[A-Za-z0-9_-]+\.md([^A-Za-z0-9_]|$)/)) {
            s = substr(rest, RSTART, RLENGTH); sub(/^[^A-Za-z0-9_-]/, "", s); sub(/[^A-Za-z0-9_]$/, "", s)
            out(line_at(pos + RSTART), "md", s)
            pos += RSTART + RLENGTH - 1; rest = substr(rest, RSTART + RLENGTH)
        }
        para = ""; nlines = 0
    }
    function add(line) {
        if (para == "") { para = line } else { sub(/^[ \t]+/, "", line); para = para " " line }
        nlines++; lnos[nlines] = FNR; starts[nlines] = length(para) - length(line) + 1
    }
    BEGIN { fence = 0; code = 0; blank = 1; pending = ""; cont = ""; contline = 0 }
    {
        line = $0
        if (line ~ /(^|[^A-Za-z0-9_.\/-])(\.\.\/)?shared\//) out(FNR, "shared", line)
        if (line ~ /^<!-- docs-check: not-ours .* -->[ \t]*$/) {
            t = line; sub(/^<!-- docs-check: not-ours /, "", t); sub(/ -->[ \t]*$/, "", t)
            out(FNR, "notours", t); next
        }
        if (line ~ /^[ \t]*<!-- figure: .* -->[ \t]*$/) {
            flush(); pending = line; sub(/^[ \t]*<!-- figure: /, "", pending); sub(/ -->[ \t]*$/, "", pending)
            blank = 0; next
        }
        if (pending != "" && line !~ /^[ \t]*$/ && line !~ /^[ \t]*(```|~~~)/) {
            out(FNR, "figure", pending "\037" line); pending = ""
        }
        if (line ~ /^[ \t]*(```|~~~)/) { flush(); fence = !fence; blank = 0; next }
        if (fence || (code && (line ~ /^    / || line ~ /^[ \t]*$/)) || (blank && line ~ /^    /)) {
            if (!fence && !code) flush()
            if (!fence) code = 1
            if (cont != "") { line = cont " " line } else { contline = FNR }
            if (line ~ /\\$/) { cont = substr(line, 1, length(line) - 1); next }
            cont = ""
            if (line !~ /^[ \t]*$/) out(contline, "code", line)
            blank = (line ~ /^[ \t]*$/); next
        }
        code = 0
        if (line ~ /^[ \t]*$/) { flush(); blank = 1; next }
        if (line ~ /^#+ /) { flush(); add(line); flush(); blank = 1; next }
        blank = 0
        add(line)
    }
    END { flush() }
    ' "$1"
}
for d in "${docs[@]}"; do extract "$d"; done > "$work/records"

# --- 1 paths -------------------------------------------------------------------------------------
# Does a repository path (relative to ROOT, or to $2) exist? Braces expanded, <x> and * globbed.
path_exists() {
    local p=$1 base=${2:-.} cand
    p=${p//<+([^>])>/*}
    [[ $p =~ ^[A-Za-z0-9_./{},*+-]+$ ]] || return 1
    [[ $p != *'*'* && $p != *'{'* && -e $base/$p ]] && return 0
    local -a cands
    if [[ $p == *'{'* ]]; then
        # shellcheck disable=SC2207
        cands=($(eval "printf '%s\n' $base/$p" 2>/dev/null)) || return 1
    else
        cands=("$base/$p")
    fi
    for cand in "${cands[@]}"; do
        [[ -e $cand ]] || { compgen -G "$cand" > /dev/null || return 1; }
    done
    return 0
}
check_path() {  # where, path
    local where=$1 p=$2 q
    p=${p%\'s}
    p=${p%%+([].,;:)\"\`\'])}
    [[ -z $p ]] && return
    if path_exists "$p"; then note "$where: path $p"; return; fi
    # CAPITALS words as placeholders (traces/accpar/NETWORK.yaml, configs/train/CONFIG.yaml)
    q=$(sed -E 's/(^|[/._-])[A-Z][A-Z0-9_]*([/._-]|$)/\1*\2/g' <<<"$p")
    if [[ $q != "$p" ]] && path_exists "$q"; then note "$where: path $p (placeholder)"; return; fi
    finding "$where" "no file or folder '$p' in the repository"
}
check_basename() {  # where, name
    local where=$1 n=$2 x ok=1
    not_ours "${where%:*}" "$n" && return
    local -a names=("$n")
    # shellcheck disable=SC2207
    [[ $n == *'{'* ]] && names=($(eval "printf '%s\n' $n" 2>/dev/null))
    for x in "${names[@]}"; do
        [[ -z $x ]] && continue
        x=${x//<+([^>])>/*}
        # shellcheck disable=SC2053
        if [[ $x == *'*'* ]]; then
            local found=0 b
            for b in "${!BASENAME[@]}"; do [[ $b == $x ]] && { found=1; break; }; done
            [[ $found == 1 ]] || ok=0
        else
            [[ -n ${BASENAME[$x]:-} ]] || ok=0
        fi
    done
    if [[ $ok == 1 ]]; then note "$where: file name $n"; else finding "$where" "no file named '$n' in the repository"; fi
}
check_link() {  # where, doc, target
    local where=$1 doc=$2 t=$3 file anchor dir
    [[ $t =~ ^[a-z]+: ]] && return  # http:, https:, mailto:
    file=${t%%#*}; anchor=""
    [[ $t == *'#'* ]] && anchor=${t#*#}
    dir=${doc%/*}; [[ $doc == */* ]] || dir=.
    if [[ -z $file ]]; then file=$doc; else
        file="$dir/$file"
        if [[ ! -e $file ]]; then finding "$where" "link to '$t': no file $file"; return; fi
    fi
    if [[ -n $anchor && -f $file && $file == *.md ]]; then
        local slugs="$work/slugs.${file//\//_}"
        [[ -f $slugs ]] || slugs_of "$file" > "$slugs"
        if ! grep -qxF -- "$anchor" "$slugs"; then
            finding "$where" "link to '$t': no heading with anchor #$anchor in $file"; return
        fi
    fi
    note "$where: link $t"
}

# --- 2, 3 symbols and tests ----------------------------------------------------------------------
check_symbol() {  # where, span
    local where=$1 s=$2 called=0 c
    if [[ $s =~ ^([A-Za-z_~][A-Za-z0-9_:~]*)\(.*\)$ ]]; then s=${BASH_REMATCH[1]}; called=1; fi
    not_ours "${where%:*}" "$s" && return
    [[ $s =~ ^[A-Za-z_][A-Za-z0-9_]*(::~?[A-Za-z_][A-Za-z0-9_]*)*$ ]] || return
    if [[ $s == *::* ]]; then
        case ${s%%::*} in std|YAML|boost|Catch|sc_core) return ;; esac
        if [[ $s == fastsim::* && $s != fastsim::*::* ]]; then
            if [[ -n ${TARGET[$s]:-} ]]; then note "$where: target $s"
            else finding "$where" "\`$s\`: no CMake target or alias of that name"; fi
            return
        fi
        local IFS=':' bad=""
        for c in $s; do
            [[ -z $c ]] && continue
            c=${c#\~}
            [[ -n ${IDENT[$c]:-} ]] || not_ours "${where%:*}" "$c" || bad+=" $c"
        done
        if [[ -z $bad ]]; then note "$where: symbol $s"
        else finding "$where" "\`$s\`: no${bad} in the C++ sources"; fi
        return
    fi
    if [[ $called == 1 || $s =~ ^[A-Z][A-Za-z0-9]*[a-z0-9][A-Z] || $s =~ ^k[A-Z] ]]; then
        [[ $s =~ ^[A-Z0-9_]+$ ]] && return
        if [[ -n ${IDENT[$s]:-} ]]; then note "$where: symbol $s"
        else finding "$where" "\`$s\`: not a word of the C++ sources"; fi
    fi
}
check_test() {  # where, name (a name ending in " …" is a prefix)
    if [[ $2 == *' …' ]] && awk -v p="${2% …}" 'index($0, p) == 1 { f = 1 } END { exit !f }' "$work/tests"; then
        note "$1: test $2"
    elif [[ -n ${TESTNAME[$2]:-} ]]; then note "$1: test $2"
    else finding "$1" "\`$2\`: no TEST_CASE of that name under tests/"; fi
}

# --- 4 commands ----------------------------------------------------------------------------------
# The options each --help shows: FLAG[help file name + space + option].
declare -A FLAG
flags_of() {  # help file
    local f
    for f in $(grep -oE -- '(^|[ [,])--?[A-Za-z][A-Za-z0-9-]*' "$1" | sed -E 's/^[ [,]//'); do FLAG["${1##*/} $f"]=1; done
}
has_flag() {  # help file, flag
    [[ -n ${FLAG["${1##*/} $2"]:-} || -n ${FLAG["help._global $2"]:-} ]]
}
for f in "$work"/help.*; do flags_of "$f"; done
# Is w[$1] a command being run: nothing before it in its command (after |, ;, &&, or an opening
# quote) but a prompt, wrappers (time, taskset -c 0, mpirun -n 3, timeout 60, env), their
# options and numbers, or VAR=value? (Not `bash run.sh build/fastsim`, nor prose: "fastsim reads".)
invoked() {
    local k t
    for ((k = $1; k >= 0; k--)); do
        t=${w[k]}
        if ((k < $1)); then
            [[ $t =~ ^(\||\|\||&&)$ ]] && return 0
            [[ $mode == code && ( $t == ';' || $t == *';' ) ]] && return 0
            [[ $t =~ ^(\$|time|taskset|timeout|mpirun|env|sudo|nice|exec|-[A-Za-z-]+|[0-9.]+[a-z]?|[A-Z_]+=.*)$ ]] || return 1
        fi
        [[ $t == \"* || $t == \'* ]] && return 0
    done
    return 0
}
check_command_text() {  # where, text, span|code (in a span, `;` is prose, not a new command)
    local where=$1 text=$2 mode=$3 i n tok sub
    local -a w
    read -r -a w <<<"$text"
    n=${#w[@]}
    for ((i = 0; i < n; i++)); do
        tok=${w[i]}; tok=${tok#\`}
        [[ $tok =~ ^[\"\']?([A-Za-z0-9_.~-]*/)?fastsim$ ]] || continue
        (( i + 1 < n )) || continue
        invoked "$i" || continue
        sub=${w[i+1]}; sub=${sub#[[(]}; sub=${sub%%+([]),.:;\`])}
        if [[ $sub == -* ]]; then
            case $sub in -h|--help|--version) note "$where: fastsim $sub" ;;
                *) finding "$where" "fastsim $sub: not a global option" ;; esac
            continue
        fi
        [[ $sub =~ ^[a-z][a-z-]*$ ]] || continue
        if [[ ! -f $work/help.$sub ]]; then
            if "$bin" "$sub" --help > "$work/help.$sub" 2>&1; then flags_of "$work/help.$sub"; else
                rm -f "$work/help.$sub"; finding "$where" "fastsim $sub: no such subcommand"; continue
            fi
        fi
        note "$where: fastsim $sub"
        local j f
        for ((j = i + 2; j < n; j++)); do
            f=${w[j]}
            [[ $f =~ ^(\||\|\||&&|;|>|2>|<|#|\$) ]] && break
            [[ $f == *';' || $f == \"* || $f == \'* ]] && break
            f=${f#[[(]}
            [[ $f =~ ^--?[A-Za-z][A-Za-z0-9-]* ]] || continue
            f=${BASH_REMATCH[0]}
            if has_flag "$work/help.$sub" "$f"; then note "$where: fastsim $sub $f"
            else finding "$where" "fastsim $sub $f: not in \`fastsim $sub --help\`"; fi
            [[ ${w[j]} == *\" || ${w[j]} == *\' ]] && break
        done
    done
}
check_lone_flag() {  # where, span, paragraph tools flag
    local where=$1 f=$2
    [[ $f =~ ^--[a-z][a-z0-9-]*([= ].*)?$ ]] || return
    f=${f%%[= ]*}
    case $f in --help|--version|--log-level) note "$where: option $f"; return ;; esac
    if has_flag "$work/help._all" "$f"; then note "$where: option $f"
    else finding "$where" "option $f: in no \`fastsim COMMAND --help\`"; fi
}

# --- 5 figures -----------------------------------------------------------------------------------
check_figure() {  # where, cmd, line
    local where=$1 cmd=$2 line=$3 key out num re
    key=$(printf '%s' "$cmd" | cksum | cut -d' ' -f1)
    out="$work/figure.$key"
    if [[ ! -f $out ]]; then
        local run
        run=$(sed -E "s#(^|[ |;&(])(build/)?fastsim( |\$)#\\1\"\$FASTSIM\"\\3#g" <<<"$cmd")
        if ! FASTSIM=$bin timeout 60 bash -c "$run" > "$out" 2>&1; then
            finding "$where" "figure command failed: $cmd"; return
        fi
    fi
    local n=0
    for num in $(sed -E 's/[^A-Za-z0-9.+-]+/ /g' <<<"$line"); do
        num=$(sed -E 's/^[+-]//; s/\.+$//' <<<"$num")
        [[ $num =~ ^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$ ]] || continue
        [[ $num == *.* || $num == *e* || ${#num} -ge 3 ]] || continue
        n=$((n + 1))
        re=$(sed -E 's/[.+]/\\&/g' <<<"$num")
        if grep -qE -- "(^|[^0-9.])${re}([^0-9]|\$)" "$out"; then note "$where: figure $num from '$cmd'"
        else finding "$where" "figure $num is not in the output of '$cmd'"; fi
    done
    [[ $n -gt 0 ]] || finding "$where" "figure marker before a line without figures"
}

# --- run -----------------------------------------------------------------------------------------
tools_re="(^|[^A-Za-z0-9_-])(${OTHER_TOOLS})([^A-Za-z0-9_-]|$)"
# Names of other programs' code a page writes in code style: `<!-- docs-check: not-ours A B -->`.
awk -F'\t' '$3 == "notours" { n = split($4, w, " "); for (i = 1; i <= n; i++) print $1 "\t" w[i] }' "$work/records" > "$work/notours"
declare -A NOTOURS
while IFS= read -r x; do NOTOURS[$x]=1; done < "$work/notours"
not_ours() { [[ -n ${NOTOURS[$1$'\t'$2]:-} ]]; }
while IFS=$'\t' read -r file line kind text; do
    where="$file:$line"
    case $kind in
        span)
            for tok in $text; do
                tok=${tok#[[(\"\']}
                [[ $tok =~ ^($TOP_FOLDERS)/ ]] && check_path "$where" "$tok"
            done
            if [[ $text =~ ^[A-Za-z0-9_.{},*\<\>-]+\.($SOURCE_EXTS)$ && $text != */* ]]; then
                [[ $text == *.in ]] || check_basename "$where" "$text"
            fi
            check_symbol "$where" "$text"
            check_command_text "$where" "$text" span
            if [[ $text == --* ]]; then
                grep -qE -- "$tools_re" <<<"$(sed -n "$((line > 3 ? line - 3 : 1)),$((line + 1))p" "$file")" ||
                    check_lone_flag "$where" "$text"
            fi
            ;;
        after) check_test "$where" "$text" ;;
        link) check_link "$where" "$file" "$text" ;;
        path) check_path "$where" "$text" ;;
        md) check_basename "$where" "$text" ;;
        code)
            for tok in $text; do
                tok=${tok#[[(\"\'\`]}
                [[ $tok =~ ^($TOP_FOLDERS)/ ]] && check_path "$where" "$tok"
            done
            check_command_text "$where" "$text" code
            ;;
        figure) check_figure "$where" "${text%%$'\037'*}" "${text#*$'\037'}" ;;
        shared) finding "$where" "points at shared/, which is outside the repository" ;;
    esac
done < "$work/records"

if [[ $fail == 0 ]]; then
    echo "docs: ${#docs[@]} pages checked: paths, links, symbols, test names, commands and figures exist"
fi
exit $fail
