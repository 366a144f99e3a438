#!/usr/bin/env bash
# Runs SPIN on bench/spin/twophase.pml (two-phase commit, the same
# specification as consequence/twophase) and prints one row per number of
# RMs and compile variant: states stored (checked against 4^n + 2^n + 6^n),
# transitions, pan's search time and the whole run's wall time (best of
# REPEAT), unique states per second, and memory per stored state. Then,
# side by side, size by size, SPIN (-DSAFETY -DNOREDUCE) and our explorer
# on one core — the CLI (check --model 2pc --workers 1, a process per run
# as pan is) and the in-process benchmark (BenchmarkExhaustive, workers=1)
# — run in turn REPEAT times each, with unique states per second and the
# ratios ours / SPIN (docs/PERFORMANCE.md, "The explorer against SPIN at every size, rounds, and the live cost").
#
#   bench/spin/run.sh [RMS...]          default: 3 5 7 8
#
# Environment:
#   REPEAT=3                  runs per row; the fastest is reported
#   REPEAT_BIG=1              runs per side-by-side row from 9 RMs on
#   ONLY="noreduce por ..."   variants to run (default: all, see below;
#                             ONLY="" runs the side-by-side table alone)
#   OURS=1                    the side-by-side table (OURS=0: SPIN alone)
#   BENCHX=3                  benchmark iterations per run up to 8 RMs (1 above)
#   PANFLAGS="-w22"           extra flags for ./pan (default: none; -m is set)
#   CC=gcc CFLAGS=-O2         compiler and optimization flags
#
# Variants (all with -DSAFETY: safety only, no cycle detection):
#   noreduce   -DNOREDUCE                full state vectors, no partial order reduction
#   por        (default)                 partial order reduction on
#   collapse   -DNOREDUCE -DCOLLAPSE     state vectors stored compressed (exact)
#   hc4        -DNOREDUCE -DHC4          hash compaction, 64-bit signatures (lossy)
#   claim      -DNOREDUCE, spin -DCLAIM  TCConsistent as a never claim
#
# It also checks that SPIN finds the planted bug (spin -DBUG) at 3 RMs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
model=$here/twophase.pml

if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed; on Debian or Ubuntu: apt-get install spin" >&2
	exit 1
fi
CC=${CC:-gcc}
CFLAGS=${CFLAGS:--O2}
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "$CC is not installed (SPIN's verifier pan.c needs a C compiler)" >&2
	exit 1
fi
REPEAT=${REPEAT:-3}
PANFLAGS=${PANFLAGS:-}
rms=${*:-3 5 7 8}

# name | flags for spin -a | flags for the C compiler
variants=(
	"noreduce||-DSAFETY -DNOREDUCE"
	"por||-DSAFETY"
	"collapse||-DSAFETY -DNOREDUCE -DCOLLAPSE"
	"hc4||-DSAFETY -DNOREDUCE -DHC4"
	"claim|-DCLAIM|-DSAFETY -DNOREDUCE"
)
ONLY=${ONLY-noreduce por collapse hc4 claim}
OURS=${OURS:-1}
REPEAT_BIG=${REPEAT_BIG:-1}
BENCHX=${BENCHX:-3}
root=$(cd "$here/../.." && pwd)

work=$(mktemp -d)
# The peak resident set of each pan run, if GNU time is installed.
timer=""
if [ -x /usr/bin/time ]; then
	timer="/usr/bin/time -f %M -o rss"
fi
trap 'rm -rf "$work"' EXIT

# build DIR N SPINFLAGS CCFLAGS: generate and compile pan in DIR.
build() {
	local dir=$1 n=$2 sflags=$3 cflags=$4
	mkdir -p "$dir"
	# shellcheck disable=SC2086
	(cd "$dir" && spin -DN="$n" $sflags -a "$model" >spin.out 2>&1 &&
		$CC $CFLAGS $cflags -o pan pan.c >cc.out 2>&1) || {
		cat "$dir"/spin.out "$dir"/cc.out 2>/dev/null >&2
		echo "spin-compare: building pan for N=$n ($sflags $cflags) failed" >&2
		exit 1
	}
}

field() { awk -v pat="$1" -v col="$2" '$0 ~ pat { print $col; exit }' "$3"; }

echo "SPIN: $(spin -V)"
echo "C compiler: $($CC --version | head -1), CFLAGS=$CFLAGS"
echo "machine: $(nproc) cores, $(uptime | sed 's/.*load/load/')"
echo

# side_by_side: for each size, SPIN (-DSAFETY -DNOREDUCE), our CLI and our
# in-process benchmark, run in turn (SPIN, CLI, benchmark) REPEAT times
# (REPEAT_BIG from 9 RMs on), the fastest of each kept: states/s are unique
# states over each one's own search time (pan's, the CLI's "speed", the
# benchmark's states/s), so process start-up counts for none of them.
side_by_side() {
	if ! command -v go >/dev/null 2>&1; then
		echo "spin-compare: go is not installed; the side-by-side table needs it" >&2
		return 1
	fi
	(cd "$root" && go build -o "$work/crystalball" ./cmd/crystalball &&
		go test -c -o "$work/twophase.test" ./consequence/twophase) || return 1
	echo "Side by side, one core each (ours: $(go version | awk '{print $3}'), workers=1; SPIN: -DSAFETY -DNOREDUCE):"
	printf '%-4s %11s %9s %11s | %9s %11s %7s | %11s %7s | %s\n' \
		RMs unique "SPIN s" "SPIN st/s" "CLI s" "CLI st/s" "CLI/SP" "bench st/s" "bn/SP" "load (1 min) at the row's start"
	local n want reps r rate t cli bench spin spins clis bad=0
	for n in $rms; do
		want=$(( 4**n + 2**n + 6**n ))
		reps=$REPEAT
		if [ "$n" -ge 9 ]; then reps=$REPEAT_BIG; fi
		local benchx=$BENCHX
		if [ "$n" -ge 9 ]; then benchx=1; fi
		local dir=$work/side-$n load
		load=$(awk '{ print $1 }' /proc/loadavg)
		build "$dir" "$n" "" "-DSAFETY -DNOREDUCE"
		spin=0 spins=- cli=0 clis=- bench=0
		for r in $(seq "$reps"); do
			(cd "$dir" && ./pan -m1000 $PANFLAGS >pan.out 2>&1)
			if [ "$(field 'states, stored' 1 "$dir/pan.out")" != "$want" ]; then
				echo "spin-compare: SPIN stored $(field 'states, stored' 1 "$dir/pan.out") states at N=$n, want $want" >&2
				bad=1
			fi
			t=$(awk '/states, stored/ { s = $1 } /^pan: rate/ { r = $3 } END { if (r > 0) printf "%.3f", s / r; else print 0 }' "$dir/pan.out")
			rate=$(field '^pan: rate' 3 "$dir/pan.out")
			if awk -v a="${rate:-0}" -v b="$spin" 'BEGIN { exit !(a > b) }'; then spin=$rate spins=$t; fi
			"$work/crystalball" check --model 2pc --rms "$n" --max-states 0 --budget 0 --workers 1 --json >"$dir/ours.json"
			if ! grep -q "\"unique\":$want," "$dir/ours.json"; then
				echo "spin-compare: ours did not find $want states at N=$n" >&2
				bad=1
			fi
			rate=$(sed -n 's/.*"states_per_second":\([0-9.e+]*\).*/\1/p' "$dir/ours.json")
			t=$(sed -n 's/.*"wall_seconds":\([0-9.e+-]*\).*/\1/p' "$dir/ours.json")
			if awk -v a="${rate:-0}" -v b="$cli" 'BEGIN { exit !(a > b) }'; then cli=$rate clis=$t; fi
			(cd "$root/consequence/twophase" && "$work/twophase.test" -test.run '^$' \
				-test.bench "Exhaustive/rms=$n/workers=1\$" -test.benchtime "${benchx}x" -rms "$n") >"$dir/bench.out" 2>&1 || {
				cat "$dir/bench.out" >&2
				bad=1
			}
			rate=$(awk '/^BenchmarkExhaustive/ { for (i = 1; i < NF; i++) if ($(i+1) == "states/s") print $i }' "$dir/bench.out")
			if awk -v a="${rate:-0}" -v b="$bench" 'BEGIN { exit !(a > b) }'; then bench=$rate; fi
		done
		awk -v n="$n" -v u="$want" -v ss="$spins" -v sr="$spin" -v cs="$clis" -v cr="$cli" -v br="$bench" -v load="$load" 'BEGIN {
			printf "%-4s %11d %9s %11.0f | %9.3f %11.0f %6.2fx | %11.0f %6.2fx | %s\n",
				n, u, ss, sr, cs, cr, (sr > 0 ? cr / sr : 0), br, (sr > 0 ? br / sr : 0), load }'
	done
	echo
	echo "SPIN s: pan's search time (10 ms resolution: under 0.1 s the ratio is coarse); CLI s: our search time"
	echo "(check's wall_seconds, start-up excluded); st/s: unique states per second; CLI/SP and bn/SP: ours / SPIN."
	return $bad
}

# Sanity: with the planted bug SPIN must report the TCConsistent violation.
build "$work/bug" 3 "-DBUG" "-DSAFETY -DNOREDUCE"
(cd "$work/bug" && ./pan -m1000 >pan.out 2>&1) || true
if grep -q "assertion violated" "$work/bug/pan.out"; then
	echo "planted bug (spin -DBUG, 3 RMs): assertion violated $(grep -o 'at depth [0-9]*' "$work/bug/pan.out" | head -1), as expected"
else
	echo "spin-compare: the planted bug was not found" >&2
	cat "$work/bug/pan.out" >&2
	exit 1
fi
echo

fail=0
if [ -n "$ONLY" ]; then
	printf '%-4s %-9s %10s %12s %8s %8s %12s %9s %9s %9s %8s\n' \
		RMs variant stored transitions "pan s" "wall s" "states/s" "vector B" "states B" "total B" "RSS MB"
	for n in $rms; do
		want=$(( 4**n + 2**n + 6**n ))
		for v in "${variants[@]}"; do
			IFS='|' read -r name sflags cflags <<<"$v"
			case " $ONLY " in *" $name "*) ;; *) continue ;; esac
			dir=$work/$n-$name
			build "$dir" "$n" "$sflags" "$cflags"
			best=""
			bestwall=""
			for _ in $(seq "$REPEAT"); do
				t0=$(date +%s%N)
				# shellcheck disable=SC2086
				(cd "$dir" && $timer ./pan -m1000 $PANFLAGS >pan.out 2>&1)
				t1=$(date +%s%N)
				wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
				# pan prints its elapsed time rounded; its rate line (stored /
				# elapsed, from a clock with 10 ms resolution) is not.
				t=$(awk '/states, stored/ { s = $1 } /^pan: rate/ { r = $3 }
					END { if (r > 0) printf "%.3f", s / r; else print 0 }' "$dir/pan.out")
				if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
					best=$t
					cp "$dir/pan.out" "$dir/best.out"
					if [ -s "$dir/rss" ]; then cp "$dir/rss" "$dir/best.rss"; fi
				fi
				if [ -z "$bestwall" ] || awk -v a="$wall" -v b="$bestwall" 'BEGIN { exit !(a < b) }'; then
					bestwall=$wall
				fi
			done
			out=$dir/best.out
			stored=$(field 'states, stored' 1 "$out")
			trans=$(field 'transitions' 1 "$out")
			errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
			vec=$(sed -n 's/^State-vector \([0-9]*\) byte.*/\1/p' "$out")
			smem=$(field 'actual memory usage for states' 1 "$out")
			tmem=$(field 'total actual memory usage' 1 "$out")
			rate=$(field '^pan: rate' 3 "$out")
			rate=$(awk -v r="${rate:-0}" 'BEGIN { if (r > 0) printf "%.0f", r; else print "-" }')
			sb=$(awk -v m="$smem" -v s="$stored" 'BEGIN { if (m != "") printf "%.1f", m * 1048576 / s; else print "-" }')
			tb=$(awk -v m="$tmem" -v s="$stored" 'BEGIN { printf "%.1f", m * 1048576 / s }')
			rss=-
			if [ -s "$dir/best.rss" ]; then rss=$(awk '{ printf "%.1f", $1 / 1024 }' "$dir/best.rss"); fi
			note=""
			if [ "$errors" != 0 ]; then
				note=" ERRORS: $errors"
				fail=1
			fi
			if [ "$stored" != "$want" ]; then
				note="$note (want $want stored)"
				[ "$name" = hc4 ] || fail=1
			fi
			printf '%-4s %-9s %10s %12s %8s %8s %12s %9s %9s %9s %8s%s\n' \
				"$n" "$name" "$stored" "$trans" "$best" "$bestwall" "$rate" "$vec" "$sb" "$tb" "$rss" "$note"
		done
	done
	echo
	echo "stored: SPIN's \"states, stored\" (want 4^n + 2^n + 6^n); pan s: pan's own elapsed time for the search;"
	echo "wall s: the whole ./pan run (hash table allocation included); states/s = stored / pan s;"
	echo "vector B: SPIN's state vector; states B: \"actual memory usage for states\" per stored state;"
	echo "total B: \"total actual memory usage\" per stored state (hash table and DFS stack included);"
	echo "RSS MB: peak resident set of the fastest run (MiB)."
	echo
fi
if [ "$OURS" != 0 ]; then
	side_by_side || fail=1
fi
exit $fail
