/* Transcendentals with stated accuracy. Vulkan lets a driver's tanh, sin
 * and cos be far less accurate than the C library (sin/cos: 2^-11 absolute
 * inside [-pi, pi], nothing promised outside), so the ops whose tolerance
 * is tight get their own, built on exp and arithmetic only. */

float tanh_acc(float x)
{
	float a = abs(x);
	if (a < 0.625) {
		float z = x * x;
		return ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z +
			 1.33314422036e-1) * z - 3.33332819422e-1) * z * x + x;
	}
	if (a > 10.0)
		return sign(x);
	float e = exp(2.0 * a);
	return sign(x) * (1.0 - 2.0 / (e + 1.0));
}

/* erfc with fractional error below 1.2e-7 everywhere (Chebyshev fit). */
float erfc_acc(float x)
{
	float z = abs(x);
	float t = 1.0 / (1.0 + 0.5 * z);
	float r = t * exp(-z * z - 1.26551223 +
			  t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
			  t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 +
			  t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
	return x >= 0.0 ? r : 2.0 - r;
}

/* sin and cos with Cody-Waite reduction by pi/2 (exact for |x| < ~4e4)
 * and minimax polynomials on [-pi/4, pi/4]. */
void sincos_acc(float x, out float s, out float c)
{
	precise float k = roundEven(x * 0.636619772367581343);
	precise float r = ((x - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.54978995489188216e-8;
	float z = r * r;
	float sp = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
	float cp = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
	int q = int(k) & 3;
	if (q == 0) {
		s = sp;
		c = cp;
	} else if (q == 1) {
		s = cp;
		c = -sp;
	} else if (q == 2) {
		s = -sp;
		c = -cp;
	} else {
		s = -cp;
		c = sp;
	}
}
