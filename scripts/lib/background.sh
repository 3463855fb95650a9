# shellcheck shell=bash
# Sourced by scripts/run-tests and scripts/run-tests-aarch64: checks that run
# side by side (each qemu keeps about one core busy) and report in order.

# bg_start OUT CMD...: runs CMD in the background, its output (stdout and
# stderr) in OUT and its exit status in OUT.rc. Environment for CMD: `env`.
bg_start() {
	local out=$1
	shift
	(
		"$@" >"$out" 2>&1
		echo $? >"$out.rc"
	) &
}

# bg_status OUT: the exit status a bg_start run recorded, once `wait` has
# returned; 1 if it recorded none.
bg_status() {
	cat "$1.rc" 2>/dev/null || echo 1
}
