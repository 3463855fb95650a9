/* The one definition of each codebook (codebooks.h): no kernel here, it is
 * linked into the program beside the kernels that read them. */
#define CODEBOOKS_DEFINE
#include "codebooks.h"
