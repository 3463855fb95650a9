#!/bin/sh
# The OpenCL plugin file carries no OpenCL C source, cannot build a program
# from source (it never resolves clCreateProgramWithSource), does not link
# the ICD loader (it dlopens it) and exports only its entry.
#   check_binary.sh <path to libgllmk-opencl.so>
set -eu
so=$1
fail=0

for text in '__kernel' '__global' 'get_global_id(' '#include' 'clCreateProgramWithSource'; do
	if strings -a "$so" | grep -F -q -- "$text"; then
		echo "FAIL: $so contains '$text'"
		fail=1
	fi
done
for want in clCreateProgramWithIL clCreateProgramWithBinary; do
	if ! strings -a "$so" | grep -F -q -x -- "$want"; then
		echo "FAIL: $so does not name $want (the precompiled paths)"
		fail=1
	fi
done
if readelf -d "$so" | grep -q 'NEEDED.*libOpenCL'; then
	echo "FAIL: $so links libOpenCL (it must dlopen libOpenCL.so.1)"
	fail=1
fi
exports=$(nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }')
if [ "$exports" != "gllmk_plugin_entry_v1@@GLLMK_PLUGIN_1" ]; then
	echo "FAIL: $so exports: $exports"
	fail=1
fi
# .init_array holds the toolchain's frame_dummy only: no constructor of ours
init=$(readelf -S -W "$so" | awk '$2 == ".init_array" { print $6 }')
if [ -n "$init" ] && [ $((0x$init)) -gt 8 ]; then
	echo "FAIL: $so has constructors (.init_array is 0x$init bytes)"
	fail=1
fi
[ $fail -eq 0 ] && echo "ok: $so: no OpenCL C source, no source build, no libOpenCL link, one export"
exit $fail
