#!/usr/bin/env bash
# Adversarial corpus of bad inputs (docs/robustness.md): every case must end with its exit status
# (2 for a user error) and a clear message on stderr, within seconds, without a crash.
#
#   bash tests/bad_inputs/run.sh [BINARY] [FILTER]
#
# BINARY  the fastsim to test (default build/fastsim; a relative path is taken from the repo root)
# FILTER  optional: a bash regular expression matched against each case's name and class
#
# cases.tsv: one case per line, tab-separated: name, class, args, expect[, setup[, exit]]. Lines starting
# with '#' are comments. In args, expect and setup, {F} is the absolute path of
# tests/bad_inputs/files, {R} the repo root, {T} a fresh empty directory for the case and {B} the
# fastsim binary under test (for a setup that makes a run folder with it). args are
# shell words (quotes and $'...' work; they are expanded with eval, so $(...) runs too). setup, if
# any, is a bash snippet run from the repo root before the case. A case passes when fastsim exits
# with status `exit` (default 2: a user error; 3 for a sweep that records a failing point; 0 for
# input that is odd but handled, such as a warning) and, if expect is not empty, stderr contains
# it (a fixed string).
#
# Each case runs from the repo root with stdin from /dev/null, under `timeout 30` and with
# `ulimit -v 4000000` (about 4 GB of address space) set in a subshell. Output: one line per case,
#   PASS|FAIL  name  exit=N | signal=SIG | TIMEOUT  seconds  first 160 characters of stderr
# then a summary per class; the exit status is 1 if any case failed.
# Environment: KEEP=1 keeps the scratch directory (its path is printed at the end);
# BAD_INPUTS_MEM_KIB sets the address-space limit (0: none, for sanitizer builds).

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
files="$here/files"
cases="$here/cases.tsv"

bin=${1:-build/fastsim}
filter=${2:-}
[[ $bin == /* ]] || bin="$root/$bin"
if [[ ! -x $bin ]]; then
    echo "run.sh: no executable fastsim at $bin" >&2
    exit 2
fi

limit_s=30
mem_kib=${BAD_INPUTS_MEM_KIB:-4000000}  # 0: no limit (AddressSanitizer reserves terabytes of address space)
work=$(mktemp -d "${TMPDIR:-/tmp}/fastsim-bad-inputs.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
    trap 'echo "scratch kept in $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi

declare -A class_pass class_fail
classes=()
failed=0
total=0

subst() {  # $1 text, $2 temp dir: the placeholders replaced
    local s=$1
    s=${s//\{F\}/$files}
    s=${s//\{R\}/$root}
    s=${s//\{T\}/$2}
    s=${s//\{B\}/$bin}
    printf '%s' "$s"
}

cd "$root" || exit 2
while IFS= read -r line || [[ -n $line ]]; do
    [[ -z $line || $line == \#* ]] && continue
    line=${line//$'\t'/$'\x1f'}  # a non-whitespace separator, so empty fields do not collapse
    IFS=$'\x1f' read -r name class args expect setup want <<<"$line"
    expect=${expect:-}
    setup=${setup:-}
    want=${want:-2}
    if [[ -n $filter && ! $name =~ $filter && ! $class =~ $filter ]]; then continue; fi
    total=$((total + 1))
    if [[ -z ${class_pass[$class]+x} ]]; then
        classes+=("$class")
        class_pass[$class]=0
        class_fail[$class]=0
    fi

    tmp="$work/$name"
    mkdir -p "$tmp"
    out="$work/$name.stdout"
    err="$work/$name.stderr"
    args_s=$(subst "$args" "$tmp")
    expect_s=$(subst "$expect" "$tmp")
    setup_s=$(subst "$setup" "$tmp")

    verdict=PASS
    status=""
    if [[ -n $setup_s ]] && ! (cd "$root" && bash -c "$setup_s") >"$work/$name.setup.log" 2>&1; then
        verdict=FAIL
        status="setup-failed"
        secs="0.00"
        printf 'setup failed: %s\n' "$(head -c 300 "$work/$name.setup.log")" >"$err"
    else
        start=$(date +%s.%N)
        # The group's stderr goes to /dev/null so that bash's "Floating point exception" notes
        # about the killed child do not mix into this script's output; fastsim's own stderr is
        # redirected inside.
        {
            (
                ((mem_kib > 0)) && ulimit -v "$mem_kib"
                cd "$root" || exit 97
                eval "set -- $args_s" || exit 98
                exec timeout -k 5 "$limit_s" "$bin" "$@"
            ) </dev/null >"$out" 2>"$err"
        } 2>/dev/null
        rc=$?
        end=$(date +%s.%N)
        secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
        if ((rc == 124)) || { ((rc == 137)) && awk -v s="$secs" -v l="$limit_s" 'BEGIN { exit !(s >= l) }'; }; then
            status="TIMEOUT"
        elif ((rc == 97 || rc == 98)); then
            status="harness-error($rc)"
        elif ((rc > 128 && rc < 160)); then
            sig=$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))
            status="signal=SIG$sig"
        else
            status="exit=$rc"
        fi
        if ((rc != want)); then
            verdict=FAIL
        elif [[ -n $expect_s ]] && ! grep -qF -- "$expect_s" "$err"; then
            verdict=FAIL
            status="$status,no-expect"
        fi
    fi
    snippet=$(head -c 160 "$err" | tr '\n\t\r' '   ' | tr -d '\000')
    printf '%-4s  %-48s %-22s %6ss  %s\n' "$verdict" "$name" "$status" "$secs" "$snippet"
    if [[ $verdict == PASS ]]; then
        class_pass[$class]=$((class_pass[$class] + 1))
    else
        class_fail[$class]=$((class_fail[$class] + 1))
        failed=$((failed + 1))
    fi
done <"$cases"

echo
echo "summary ($bin):"
printf '  %-18s %5s %5s %5s\n' class cases pass fail
for c in "${classes[@]}"; do
    printf '  %-18s %5d %5d %5d\n' "$c" $((class_pass[$c] + class_fail[$c])) "${class_pass[$c]}" "${class_fail[$c]}"
done
printf '  %-18s %5d %5d %5d\n' total "$total" $((total - failed)) "$failed"
((failed == 0)) || exit 1
exit 0
