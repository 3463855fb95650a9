#!/bin/sh
# run_debug_tests.sh MODE PROG LAYER DIR
#
# Runs debug_prog (PROG) without the layer, then with LD_PRELOAD=LAYER in
# one GLLMK_DEBUG mode, and asserts on what the layer prints. Every mode
# first checks that the program's results are bit for bit those of the run
# without the layer. DIR holds libgllmk-debugtest-wrong.so.
#
#   off      preloaded, GLLMK_DEBUG unset or empty: silent pass-through
#   trace    one line per call, to stderr and to GLLMK_DEBUG_FILE
#   stats    the per-op table at gllmk_close
#   check    a planted NaN and a write past a view are named with op and call
#   compare  a wrong scale is reported against cpu-generic; a correct
#            plugin gives no report, nor one opened with
#            GLLMK_OPEN_BF16_ACTIVATIONS whose bf16 matmul rounds x (the
#            layer gets the flag in gllmk_open_args.flags)
#   all      every mode at once
#   refuse   an unknown GLLMK_DEBUG word or an unwritable GLLMK_DEBUG_FILE
#            makes gllmk_open fail with the reason
# trace, check and compare also run the prepared-weights scenario: the same
# bytes as without the layer, a trace line per op, no check report, and
# under compare one line saying calls on prepared weights go uncompared.
set -eu

mode=$1 prog=$2 layer=$3 dir=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# An ASan build of the program with a preloaded non-ASan library.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
unset GLLMK_DEBUG GLLMK_DEBUG_FILE GLLMK_PLUGIN || true

fail() {
	echo "FAIL (debug-$mode): $*" >&2
	exit 1
}

show() {
	echo "--- $1:" >&2
	cat "$1" >&2
}

expect() {
	grep -E -q -- "$2" "$1" || { show "$1"; fail "no line of $1 matches: $2"; }
}

reject() {
	if grep -E -q -- "$2" "$1"; then
		show "$1"
		fail "a line of $1 matches: $2"
	fi
}

# layer GLLMK_DEBUG TAG ARGS...: PROG under the layer; output in $tmp/TAG.*
layer() {
	dbg=$1 tag=$2
	shift 2
	env LD_PRELOAD="$layer" GLLMK_DEBUG="$dbg" "$prog" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err"
}

# results GLLMK_DEBUG TAG: the results scenario, identical to the plain run.
results() {
	layer "$1" "$2" results "$tmp/$2.bin" || { show "$tmp/$2.err"; fail "results under GLLMK_DEBUG=$1 failed"; }
	cmp -s "$tmp/plain.bin" "$tmp/$2.bin" || fail "results under GLLMK_DEBUG=$1 differ from those without the layer"
	expect "$tmp/$2.out" '^layer=debug$'
}

"$prog" results "$tmp/plain.bin" >"$tmp/plain.out" 2>"$tmp/plain.err" || { show "$tmp/plain.err"; fail "plain run"; }
ops=$(sed -n 's/^ops=//p' "$tmp/plain.out")
[ -n "$ops" ] || fail "the program did not say how many ops it ran"
expect "$tmp/plain.out" '^layer=$'

# prepared GLLMK_DEBUG: the prepared-weights scenario under the layer,
# identical to the plain run; sets $prepared (1 if the plugin prepared).
"$prog" prepared "$tmp/prep-plain.bin" >"$tmp/prep-plain.out" 2>"$tmp/prep-plain.err" ||
	{ show "$tmp/prep-plain.err"; fail "plain prepared-weights run"; }
prepared=$(sed -n 's/^prepared=//p' "$tmp/prep-plain.out")
prep_ops=$(sed -n 's/^ops=//p' "$tmp/prep-plain.out")
prepared() {
	layer "$1" prep prepared "$tmp/prep.bin" || { show "$tmp/prep.err"; fail "prepared weights under GLLMK_DEBUG=$1"; }
	cmp -s "$tmp/prep-plain.bin" "$tmp/prep.bin" ||
		fail "prepared weights under GLLMK_DEBUG=$1 differ from those without the layer"
}

case $mode in
off)
	for v in unset empty; do
		if [ $v = unset ]; then
			env LD_PRELOAD="$layer" "$prog" results "$tmp/off.bin" >"$tmp/off.out" 2>"$tmp/off.err" ||
				fail "preloaded without GLLMK_DEBUG"
		else
			layer "" off results "$tmp/off.bin" || fail "preloaded with GLLMK_DEBUG empty"
		fi
		cmp -s "$tmp/plain.bin" "$tmp/off.bin" || fail "pass-through ($v) changed the results"
		expect "$tmp/off.out" '^layer=debug-off$'
		[ ! -s "$tmp/off.err" ] || { show "$tmp/off.err"; fail "pass-through ($v) printed something"; }
	done
	;;
trace)
	results trace trace
	n=$(grep -E -c '^gllmk-debug: #[0-9]+ ' "$tmp/trace.err" || true)
	[ "$n" = "$ops" ] || { show "$tmp/trace.err"; fail "$n trace lines for $ops calls"; }
	expect "$tmp/trace.err" '^gllmk-debug: #1 convert y=f16\[32,64\] x=f32\[32,64\] [0-9]+\.[0-9] us OK$'
	expect "$tmp/trace.err" '^gllmk-debug: #4 matmul y=f32\[4,32\] x=f32\[4,64\] w=f16\[32,64\] bias=f32\[32\] [0-9.]+ us OK$'
	expect "$tmp/trace.err" '^gllmk-debug: #5 matmul y=f32\[4,32\] x=f32\[4,64\] w=q8_0\[32,64\] bias=- [0-9.]+ us OK$'
	expect "$tmp/trace.err" "^gllmk-debug: #$ops sample ids=i32\\[4\\] logits=f32\\[4,32\\] [0-9.]+ us OK\$"
	# To a file: nothing on stderr, the same lines in the file.
	GLLMK_DEBUG_FILE="$tmp/trace.log" layer trace tofile results "$tmp/tofile.bin" || fail "trace to a file"
	cmp -s "$tmp/plain.bin" "$tmp/tofile.bin" || fail "trace to a file changed the results"
	[ ! -s "$tmp/tofile.err" ] || { show "$tmp/tofile.err"; fail "trace to a file printed on stderr"; }
	n=$(grep -E -c '^gllmk-debug: #[0-9]+ ' "$tmp/trace.log" || true)
	[ "$n" = "$ops" ] || { show "$tmp/trace.log"; fail "$n trace lines in GLLMK_DEBUG_FILE for $ops calls"; }
	prepared trace
	n=$(grep -E -c '^gllmk-debug: #[0-9]+ ' "$tmp/prep.err" || true)
	[ "$n" = "$prep_ops" ] || { show "$tmp/prep.err"; fail "$n trace lines for $prep_ops calls on prepared weights"; }
	expect "$tmp/prep.err" '^gllmk-debug: #3 get_rows y=f32\[2,64\] table=q4_0\[16,64\] ids=i32\[2\] '
	;;
stats)
	results stats stats
	reject "$tmp/stats.err" '^gllmk-debug: #'
	expect "$tmp/stats.err" "^gllmk-debug: stats: $ops operator calls over plugin '"
	expect "$tmp/stats.err" '^gllmk-debug: stats: matmul +2 +0 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{2}$'
	expect "$tmp/stats.err" '^gllmk-debug: stats: sample +1 +0 '
	expect "$tmp/stats.err" "^gllmk-debug: stats: total +$ops "
	;;
check)
	results check check
	reject "$tmp/check.err" 'check:'
	layer check nan nan || { show "$tmp/nan.err"; fail "nan scenario"; }
	expect "$tmp/nan.err" '^gllmk-debug: check: call #2 add: output y f32\[2,8\] has 1 NaN/Inf, the first NaN at \[1,3\]; a has 1 \(the inputs held NaN/Inf already\)'
	reject "$tmp/nan.err" 'call #1 '
	layer check guard guard "$dir" || { show "$tmp/guard.err"; fail "guard scenario"; }
	expect "$tmp/guard.err" '^gllmk-debug: check: call #2 relu, argument y: guard bytes after buffer #3 \(256 bytes\) overwritten: byte 0 past its end$'
	reject "$tmp/guard.err" 'call #1 '
	prepared check
	reject "$tmp/prep.err" 'check:'
	;;
compare)
	results compare compare
	reject "$tmp/compare.err" 'compare:'
	layer compare wrong wrong "$dir" || { show "$tmp/wrong.err"; fail "wrong scenario"; }
	expect "$tmp/wrong.err" '^gllmk-debug: compare: call #2 scale: y f32\[4,16\] differs from cpu-generic: relative error [0-9.e+-]+ > tolerance [0-9.e+-]+, worst at \[[0-9]+,[0-9]+\]: got '
	reject "$tmp/wrong.err" 'call #1 '
	# A correct plugin under compare: no report.
	layer compare nan nan || { show "$tmp/nan.err"; fail "nan scenario under compare"; }
	reject "$tmp/nan.err" 'compare:'
	layer compare bf16act bf16act || { show "$tmp/bf16act.err"; fail "bf16act scenario under compare"; }
	reject "$tmp/bf16act.err" 'compare:'
	prepared compare
	reject "$tmp/prep.err" 'differs|could not|cannot'
	if [ "$prepared" = 1 ]; then
		expect "$tmp/prep.err" '^gllmk-debug: compare: call #1 matmul: w is prepared weights \(the plugin.s layout\): calls that read prepared weights are not compared$'
		n=$(grep -c 'compare:' "$tmp/prep.err" || true)
		[ "$n" = 1 ] || { show "$tmp/prep.err"; fail "$n compare lines on prepared weights, want the one note"; }
	fi
	;;
all)
	results all all
	n=$(grep -E -c '^gllmk-debug: #[0-9]+ ' "$tmp/all.err" || true)
	[ "$n" = "$ops" ] || { show "$tmp/all.err"; fail "$n trace lines for $ops calls"; }
	expect "$tmp/all.err" "^gllmk-debug: stats: total +$ops "
	reject "$tmp/all.err" 'check:|compare:'
	layer trace,check nan nan || fail "nan scenario under trace,check"
	expect "$tmp/nan.err" 'check: call #2 add:'
	;;
refuse)
	if layer trace,bogus bogus results "$tmp/bogus.bin"; then
		fail "GLLMK_DEBUG=trace,bogus did not fail gllmk_open"
	fi
	expect "$tmp/bogus.err" "GLLMK_DEBUG: unknown word 'bogus' \\(known: trace, check, compare, stats, all\\)"
	if GLLMK_DEBUG_FILE="$tmp/no/such/dir/log" layer trace nofile results "$tmp/nofile.bin"; then
		fail "an unwritable GLLMK_DEBUG_FILE did not fail gllmk_open"
	fi
	expect "$tmp/nofile.err" "GLLMK_DEBUG_FILE: cannot open '$tmp/no/such/dir/log'"
	;;
*)
	fail "unknown mode"
	;;
esac
echo "debug-$mode: ok"
