#pragma OPENCL FP_CONTRACT OFF
#ifdef __clang__
#define KD_VLD(T, N, S, p) (*(S const kd_u##T##N*)(p))
#define KD_VST(T, N, S, p, v) (*(S kd_u##T##N*)(p) = (v))
#else
#define KD_VLD(T, N, S, p) vload##N(0, p)
#define KD_VST(T, N, S, p, v) vstore##N(v, 0, p)
#endif
#ifdef __clang__
typedef float16 __attribute__((aligned(4))) kd_ufloat16;
#endif
#ifdef __clang__
typedef float4 __attribute__((aligned(4))) kd_ufloat4;
#endif
__kernel void mm_kernel(
    const __global uchar* a_ptr_base,
    ulong a_ptr_off,
    const __global uchar* b_ptr_base,
    ulong b_ptr_off,
    __global uchar* c_ptr_base,
    ulong c_ptr_off,
    int M,
    int N,
    int K)
{
  __global float* restrict const a_ptr = (__global float*)(a_ptr_base + a_ptr_off);
  __global float* restrict const b_ptr = (__global float*)(b_ptr_base + b_ptr_off);
  __global float* restrict const c_ptr = (__global float*)(c_ptr_base + c_ptr_off);
  const int v1 = ((int)get_group_id(0));
  const int v2 = ((int)get_group_id(1));
  float v3[128];
  float v4[32];
  float v5[64];
  const int v6 = ((int)((uint)v1 * (uint)8));
  const int v7 = ((int)((uint)v2 * (uint)16));
  const int v8 = ((int)((uint)v6 * (uint)K));
  __global float* const v9 = ((__global float*)a_ptr + v8);
  __global float* const v10 = ((__global float*)b_ptr + v7);
  const int v11 = ((int)((uint)K + (uint)4));
  const int v12 = ((int)((uint)v11 - (uint)1));
  const int v13 = ((int)(v12 / 4));
  const float16 v14 = ((float16)(0.0f));
  for (int v15 = 0; v15 < 128; v15 += 16) {
    KD_VST(float, 16, __private, v3 + v15, v14);
  }
  long v16 = 0L;
  long v17 = 0L;
  for (int v18 = 0; v18 < v13; v18 += 1) {
    __global float* const v19 = ((__global float*)v9 + v16);
    __global float* const v20 = ((__global float*)v10 + v17);
    const int v21 = ((int)((uint)M - (uint)v6));
    const int v22 = ((int)((uint)v18 * (uint)4));
    const int v23 = ((int)((uint)K - (uint)v22));
    {
      const int bk24_er = ((v21) <= 0 ? 0 : (v21) >= 8 ? 8 : (int)(v21));
      const int bk24_ec = ((v23) <= 0 ? 0 : (v23) >= 4 ? 4 : (int)(v23));
      for (int bk24_r = 0; bk24_r < bk24_er; bk24_r += 1) {
        __global float* const bk24_g = v19 + (long)bk24_r * K;
        float* const bk24_p = v4 + bk24_r * 4;
        if (bk24_ec == 4) {
          KD_VST(float, 4, __private, bk24_p + 0, KD_VLD(float, 4, __global, bk24_g + 0));
        } else {
          for (int bk24_c = 0; bk24_c < 4; bk24_c += 1) bk24_p[bk24_c] = bk24_c < bk24_ec ? bk24_g[bk24_c] : 0.0f;
        }
      }
      for (int bk24_c = bk24_er * 4; bk24_c < 32; bk24_c += 1) v4[bk24_c] = 0.0f;
    }
    const int v25 = ((int)((uint)N - (uint)v7));
    {
      const int bk26_er = ((v23) <= 0 ? 0 : (v23) >= 4 ? 4 : (int)(v23));
      const int bk26_ec = ((v25) <= 0 ? 0 : (v25) >= 16 ? 16 : (int)(v25));
      for (int bk26_r = 0; bk26_r < bk26_er; bk26_r += 1) {
        __global float* const bk26_g = v20 + (long)bk26_r * N;
        float* const bk26_p = v5 + bk26_r * 16;
        if (bk26_ec == 16) {
          KD_VST(float, 16, __private, bk26_p + 0, KD_VLD(float, 16, __global, bk26_g + 0));
        } else {
          for (int bk26_c = 0; bk26_c < 16; bk26_c += 1) bk26_p[bk26_c] = bk26_c < bk26_ec ? bk26_g[bk26_c] : 0.0f;
        }
      }
      for (int bk26_c = bk26_er * 16; bk26_c < 64; bk26_c += 1) v5[bk26_c] = 0.0f;
    }
    for (int mm27_j = 0; mm27_j < 16; mm27_j += 16) {
      for (int mm27_i = 0; mm27_i < 8; mm27_i += 4) {
        float16 mm27_c0_0 = KD_VLD(float, 16, __private, v3 + (mm27_i + 0) * 16 + mm27_j + 0);
        float16 mm27_c1_0 = KD_VLD(float, 16, __private, v3 + (mm27_i + 1) * 16 + mm27_j + 0);
        float16 mm27_c2_0 = KD_VLD(float, 16, __private, v3 + (mm27_i + 2) * 16 + mm27_j + 0);
        float16 mm27_c3_0 = KD_VLD(float, 16, __private, v3 + (mm27_i + 3) * 16 + mm27_j + 0);
        for (int mm27_k = 0; mm27_k < 4; mm27_k += 1) {
          const float16 mm27_b0 = KD_VLD(float, 16, __private, v5 + mm27_k * 16 + mm27_j + 0);
          const float16 mm27_a0 = (float16)(v4[(mm27_i + 0) * 4 + mm27_k]);
          mm27_c0_0 = fma(mm27_a0, mm27_b0, mm27_c0_0);
          const float16 mm27_a1 = (float16)(v4[(mm27_i + 1) * 4 + mm27_k]);
          mm27_c1_0 = fma(mm27_a1, mm27_b0, mm27_c1_0);
          const float16 mm27_a2 = (float16)(v4[(mm27_i + 2) * 4 + mm27_k]);
          mm27_c2_0 = fma(mm27_a2, mm27_b0, mm27_c2_0);
          const float16 mm27_a3 = (float16)(v4[(mm27_i + 3) * 4 + mm27_k]);
          mm27_c3_0 = fma(mm27_a3, mm27_b0, mm27_c3_0);
        }
        KD_VST(float, 16, __private, v3 + (mm27_i + 0) * 16 + mm27_j + 0, mm27_c0_0);
        KD_VST(float, 16, __private, v3 + (mm27_i + 1) * 16 + mm27_j + 0, mm27_c1_0);
        KD_VST(float, 16, __private, v3 + (mm27_i + 2) * 16 + mm27_j + 0, mm27_c2_0);
        KD_VST(float, 16, __private, v3 + (mm27_i + 3) * 16 + mm27_j + 0, mm27_c3_0);
      }
    }
    const int v28 = ((int)((uint)N * (uint)4));
    const long v29 = ((long)((ulong)v16 + (ulong)4L));
    const long v30 = ((long)(v28));
    const long v31 = ((long)((ulong)v17 + (ulong)v30));
    const long t31_0 = v29;
    const long t31_1 = v31;
    v16 = t31_0;
    v17 = t31_1;
  }
  const int v32 = ((int)((uint)v6 * (uint)N));
  __global float* const v33 = ((__global float*)c_ptr + v32);
  __global float* const v34 = ((__global float*)v33 + v7);
  const int v35 = ((int)((uint)M - (uint)v6));
  const int v36 = ((int)((uint)N - (uint)v7));
  {
    const int bk37_er = ((v35) <= 0 ? 0 : (v35) >= 8 ? 8 : (int)(v35));
    const int bk37_ec = ((v36) <= 0 ? 0 : (v36) >= 16 ? 16 : (int)(v36));
    for (int bk37_r = 0; bk37_r < bk37_er; bk37_r += 1) {
      __global float* const bk37_g = v34 + (long)bk37_r * N;
      float* const bk37_p = v3 + bk37_r * 16;
      if (bk37_ec == 16) {
        KD_VST(float, 16, __global, bk37_g + 0, KD_VLD(float, 16, __private, bk37_p + 0));
      } else {
        for (int bk37_c = 0; bk37_c < bk37_ec; bk37_c += 1) bk37_g[bk37_c] = bk37_p[bk37_c];
      }
    }
  }
}

