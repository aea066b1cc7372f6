/* FMA peak probe: 12 independent float16 fma chains per work-item (enough to hide the
 * 4-cycle latency of two FMA ports), ITERS steps each; one work-item per work-group so PoCL
 * runs it as a plain loop (no cross-work-item vectorisation needed). */
__kernel void fma_peak(__global float* out, int iters, float s)
{
    float16 x0 = (float16)(get_global_id(0)), x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5;
    float16 x6 = x0 + 6, x7 = x0 + 7, x8 = x0 + 8, x9 = x0 + 9, x10 = x0 + 10, x11 = x0 + 11;
    const float16 m = (float16)(s);
    for (int i = 0; i < iters; ++i) {
        x0 = fma(x0, m, m); x1 = fma(x1, m, m); x2 = fma(x2, m, m); x3 = fma(x3, m, m);
        x4 = fma(x4, m, m); x5 = fma(x5, m, m); x6 = fma(x6, m, m); x7 = fma(x7, m, m);
        x8 = fma(x8, m, m); x9 = fma(x9, m, m); x10 = fma(x10, m, m); x11 = fma(x11, m, m);
    }
    const float16 t = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)) + ((x8 + x9) + (x10 + x11));
    out[get_global_id(0)] = t.s0 + t.s1 + t.s2 + t.s3 + t.s4 + t.s5 + t.s6 + t.s7
                          + t.s8 + t.s9 + t.sa + t.sb + t.sc + t.sd + t.se + t.sf;
}
