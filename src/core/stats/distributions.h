// Distribution functions behind the p-values and confidence intervals of src/core/stats: the normal, Student's t
// (through the regularized incomplete beta function) and Kolmogorov's limiting distribution. Written here because
// rldk needs only these few and a statistics library would cost more than it gives; each is checked against SciPy
// in tests/unit/reward_health_test.cpp.
#pragma once

namespace rldk::stats {

// Standard normal CDF and survival function (SciPy: norm.cdf, norm.sf); the sf keeps precision far in the tail.
double normal_cdf(double z);
double normal_sf(double z);
// Inverse of normal_cdf for 0 < p < 1 (SciPy: norm.ppf); NaN outside. Acklam's rational approximation refined by
// one Halley step on erfc, to full double precision.
double normal_quantile(double p);

// Regularized incomplete beta I_x(a, b) for a, b > 0 and 0 <= x <= 1 (SciPy: special.betainc), by Lentz's
// continued fraction on the side where it converges fast.
double incomplete_beta(double a, double b, double x);

// Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| >= |t|) (SciPy: 2 * t.sf(|t|, df)).
double student_t_two_sided_p(double t, double df);

// Survival function of Kolmogorov's limiting distribution, P(K > z) with K = sup |Brownian bridge| (SciPy:
// kstwobign.sf).
double kolmogorov_sf(double z);

}  // namespace rldk::stats
