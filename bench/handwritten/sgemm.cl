/* Hand-written register-blocked SGEMM for PoCL (the baseline of bench/bench_matmul.py --handwritten).
 *
 * C[M, N] = A[M, K] @ B[K, N], row-major fp32, M % (8 * WG_M) == 0, N % 32 == 0, K % KB == 0.
 * Each work-item keeps an 8 x 32 block of C in 16 float16 accumulators (one AVX-512 register
 * each): per k it loads two float16 of a row of B, broadcasts 8 scalars of A and issues 16 fma.
 * K is walked in blocks of KB with a barrier after each block: PoCL turns the barrier into a
 * region split, so every work-item of the group runs its KB-long slice before the next block
 * starts, and the B panel (KB x 32) / A rows of the group stay in cache while they are reused.
 * Work-group: WG_M work-items stacked along M (local size (WG_M, 1), dim 0 = rows).
 */
#ifndef KB
#define KB 256
#endif

__kernel void sgemm(__global const float* restrict A, __global const float* restrict B,
                    __global float* restrict C, int M, int N, int K)
{
    const int row = get_global_id(0) * 8;
    const int col = get_global_id(1) * 32;
    float16 c00 = 0, c01 = 0, c10 = 0, c11 = 0, c20 = 0, c21 = 0, c30 = 0, c31 = 0;
    float16 c40 = 0, c41 = 0, c50 = 0, c51 = 0, c60 = 0, c61 = 0, c70 = 0, c71 = 0;
    for (int k0 = 0; k0 < K; k0 += KB) {
        __global const float* a = A + (long)row * K + k0;
        __global const float* b = B + (long)k0 * N + col;
        for (int k = 0; k < KB; ++k) {
            const float16 b0 = vload16(0, b + (long)k * N);
            const float16 b1 = vload16(0, b + (long)k * N + 16);
            float16 x;
            x = (float16)(a[k]);         c00 = fma(x, b0, c00); c01 = fma(x, b1, c01);
            x = (float16)(a[K + k]);     c10 = fma(x, b0, c10); c11 = fma(x, b1, c11);
            x = (float16)(a[2 * K + k]); c20 = fma(x, b0, c20); c21 = fma(x, b1, c21);
            x = (float16)(a[3 * K + k]); c30 = fma(x, b0, c30); c31 = fma(x, b1, c31);
            x = (float16)(a[4 * K + k]); c40 = fma(x, b0, c40); c41 = fma(x, b1, c41);
            x = (float16)(a[5 * K + k]); c50 = fma(x, b0, c50); c51 = fma(x, b1, c51);
            x = (float16)(a[6 * K + k]); c60 = fma(x, b0, c60); c61 = fma(x, b1, c61);
            x = (float16)(a[7 * K + k]); c70 = fma(x, b0, c70); c71 = fma(x, b1, c71);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __global float* c = C + (long)row * N + col;
    vstore16(c00, 0, c); vstore16(c01, 0, c + 16); c += N;
    vstore16(c10, 0, c); vstore16(c11, 0, c + 16); c += N;
    vstore16(c20, 0, c); vstore16(c21, 0, c + 16); c += N;
    vstore16(c30, 0, c); vstore16(c31, 0, c + 16); c += N;
    vstore16(c40, 0, c); vstore16(c41, 0, c + 16); c += N;
    vstore16(c50, 0, c); vstore16(c51, 0, c + 16); c += N;
    vstore16(c60, 0, c); vstore16(c61, 0, c + 16); c += N;
    vstore16(c70, 0, c); vstore16(c71, 0, c + 16);
}
