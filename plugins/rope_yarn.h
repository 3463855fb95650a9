/* rope_ext's host-side arithmetic, shared by every plugin (CPU framework,
 * Vulkan, OpenCL): SPEC/OPERATORS.md "rope_ext".
 *
 * - rope_ext_of: the 1.0 gllmk_rope params as rope_ext params, so each plugin
 *   has one rope path and the 1.0 slot is rope_ext with the defaults.
 * - rope_yarn_of: YaRN's correction dims and magnitude scale, evaluated in
 *   f32 exactly as ggml_rope_yarn_corr_dims and rope_yarn do (floorf/ceilf
 *   of f32 logs decide which pairs ramp, so the precision is part of the
 *   contract).
 * - rope_yarn_mix: pair i's extrapolation share, ggml's rope_yarn_ramp times
 *   ext_factor.
 *
 * The core has already applied the zero defaults (attn_factor 1, beta_fast
 * 32, beta_slow 1) and checked every field.
 */
#ifndef GLLMK_PLUGINS_ROPE_YARN_H
#define GLLMK_PLUGINS_ROPE_YARN_H

#include <math.h>

#include "gllmk.h"

static inline gllmk_rope_ext_params rope_ext_of(const gllmk_rope_params *p)
{
	return (gllmk_rope_ext_params){
		.struct_size = sizeof(gllmk_rope_ext_params),
		.mode = p->mode,
		.n_rot = p->n_rot,
		.theta_base = p->theta_base,
		.freq_scale = p->freq_scale,
		.attn_factor = 1.0f,
		.beta_fast = 32.0f,
		.beta_slow = 1.0f,
	};
}

struct rope_yarn {
	float lo, hi;     /* correction dims: pairs below lo extrapolate, above hi interpolate */
	float ext_factor; /* 0: YaRN off, every pair interpolates (freq_scale) */
	float mscale;     /* cos and sin are scaled by it */
};

/* ggml_rope_yarn_corr_dim: the pair whose wavelength fits n_ctx_orig / beta times. */
static inline float rope_yarn_corr_dim(int n_rot, int n_ctx_orig, float beta, float base)
{
	return (float)n_rot * logf((float)n_ctx_orig / (beta * 2.0f * (float)M_PI)) / (2.0f * logf(base));
}

static inline struct rope_yarn rope_yarn_of(const gllmk_rope_ext_params *p, int n_rot)
{
	struct rope_yarn y = { .lo = 0.0f, .hi = 0.0f, .ext_factor = p->ext_factor, .mscale = p->attn_factor };

	if (p->ext_factor != 0.0f) {
		float lo = floorf(rope_yarn_corr_dim(n_rot, p->n_ctx_orig, p->beta_fast, p->theta_base));
		float hi = ceilf(rope_yarn_corr_dim(n_rot, p->n_ctx_orig, p->beta_slow, p->theta_base));

		y.lo = lo > 0.0f ? lo : 0.0f;
		y.hi = hi < (float)(n_rot - 1) ? hi : (float)(n_rot - 1);
		y.mscale *= 1.0f + 0.1f * logf(1.0f / p->freq_scale);
	}
	return y;
}

/* 0 (interpolate: the angle scaled by freq_scale) .. ext_factor
 * (extrapolate: the angle as trained) for pair i. */
static inline float rope_yarn_mix(const struct rope_yarn *y, int64_t i)
{
	float r, d;

	if (y->ext_factor == 0.0f)
		return 0.0f;
	d = y->hi - y->lo > 0.001f ? y->hi - y->lo : 0.001f;
	r = ((float)i - y->lo) / d;
	r = r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
	return (1.0f - r) * y->ext_factor;
}

#endif
