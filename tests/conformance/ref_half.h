/* Reference f16 / bf16 / f32 encodings computed from the value in double:
 * round to nearest, ties to even, with subnormals, overflow to infinity and
 * NaN kept NaN. Written for the tests from IEEE 754 (binary16, binary32) and
 * bfloat16's definition (binary32's exponent, 7 stored mantissa bits), not
 * from any plugin.
 */
#ifndef GLLMK_CONF_REF_HALF_H
#define GLLMK_CONF_REF_HALF_H

#include <stdint.h>

uint16_t ref_f16_bits(double v);
uint16_t ref_bf16_bits(double v);
uint32_t ref_f32_bits(double v);

double ref_f16_value(uint16_t bits);
double ref_bf16_value(uint16_t bits);
double ref_f32_value(uint32_t bits);

int ref_f16_is_nan(uint16_t bits);
int ref_bf16_is_nan(uint16_t bits);
int ref_f32_is_nan(uint32_t bits);

#endif
