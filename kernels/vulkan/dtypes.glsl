/* gllmk dtype values (ggml's type ids) as DT_<NAME>, for -DWTYPE=... in the
 * build: generated from abi/gllmk_dtypes.def (abi/gen_dtypes.py). */
#include "gllmk_dtype_ids.h"
