#pragma OPENCL FP_CONTRACT OFF
inline int kd_div_int(int a, int b) { return b == 0 ? (int)0 : (b == -1 ? (int)((uint)0 - (uint)a) : (int)(a / b)); }
inline int kd_rem_int(int a, int b) { return (b == 0 || b == -1) ? (int)0 : (int)(a % b); }
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
__kernel void matmul_kernel(
    const __global uchar* a_ptr_base,
    ulong a_ptr_off,
    const __global uchar* b_ptr_base,
    ulong b_ptr_off,
    __global uchar* c_ptr_base,
    ulong c_ptr_off,
    int M,
    int N,
    int K,
    int stride_am,
    int stride_bk,
    int stride_cm)
{
  __global float* restrict const a_ptr = (__global float*)(a_ptr_base + a_ptr_off);
  __global float* restrict const b_ptr = (__global float*)(b_ptr_base + b_ptr_off);
  __global float* restrict const c_ptr = (__global float*)(c_ptr_base + c_ptr_off);
  const int v1 = ((int)get_group_id(0));
  float v2[1024];
  float v3[1024];
  float v4[1024];
  const int v5 = ((int)((uint)M + (uint)32));
  const int v6 = ((int)((uint)v5 - (uint)1));
  const int v7 = ((int)(v6 / 32));
  const int v8 = ((int)((uint)N + (uint)32));
  const int v9 = ((int)((uint)v8 - (uint)1));
  const int v10 = ((int)(v9 / 32));
  const int v11 = ((int)((uint)v10 * (uint)4));
  const int v12 = kd_div_int(v1, v11);
  const int v13 = ((int)((uint)v12 * (uint)4));
  const int v14 = ((int)((uint)v7 - (uint)v13));
  const int v15 = min(v14, 4);
  const int v16 = kd_rem_int(v1, v11);
  const int v17 = kd_rem_int(v16, v15);
  const int v18 = ((int)((uint)v13 + (uint)v17));
  const int v19 = kd_div_int(v16, v15);
  const int v20 = ((int)((uint)v18 * (uint)32));
  const int v21 = ((int)((uint)v19 * (uint)32));
  const int v22 = ((int)((uint)v20 * (uint)stride_am));
  __global float* const v23 = ((__global float*)a_ptr + v22);
  __global float* const v24 = ((__global float*)b_ptr + v21);
  const int v25 = ((int)((uint)K + (uint)32));
  const int v26 = ((int)((uint)v25 - (uint)1));
  const int v27 = ((int)(v26 / 32));
  const float16 v28 = ((float16)(0.0f));
  for (int v29 = 0; v29 < 1024; v29 += 16) {
    KD_VST(float, 16, __private, v2 + v29, v28);
  }
  long v30 = 0L;
  long v31 = 0L;
  for (int v32 = 0; v32 < v27; v32 += 1) {
    __global float* const v33 = ((__global float*)v23 + v30);
    __global float* const v34 = ((__global float*)v24 + v31);
    const int v35 = ((int)((uint)v32 * (uint)32));
    const int v36 = ((int)((uint)K - (uint)v35));
    const int v37 = ((int)((uint)M - (uint)v20));
    {
      const int bk38_er = ((v37) <= 0 ? 0 : (v37) >= 32 ? 32 : (int)(v37));
      const int bk38_ec = ((v36) <= 0 ? 0 : (v36) >= 32 ? 32 : (int)(v36));
      for (int bk38_r = 0; bk38_r < bk38_er; bk38_r += 1) {
        __global float* const bk38_g = v33 + (long)bk38_r * stride_am;
        float* const bk38_p = v3 + bk38_r * 32;
        if (bk38_ec == 32) {
          KD_VST(float, 16, __private, bk38_p + 0, KD_VLD(float, 16, __global, bk38_g + 0));
          KD_VST(float, 16, __private, bk38_p + 16, KD_VLD(float, 16, __global, bk38_g + 16));
        } else {
          for (int bk38_c = 0; bk38_c < 32; bk38_c += 1) bk38_p[bk38_c] = bk38_c < bk38_ec ? bk38_g[bk38_c] : 0.0f;
        }
      }
      for (int bk38_c = bk38_er * 32; bk38_c < 1024; bk38_c += 1) v3[bk38_c] = 0.0f;
    }
    const int v39 = ((int)((uint)N - (uint)v21));
    {
      const int bk40_er = ((v36) <= 0 ? 0 : (v36) >= 32 ? 32 : (int)(v36));
      const int bk40_ec = ((v39) <= 0 ? 0 : (v39) >= 32 ? 32 : (int)(v39));
      for (int bk40_r = 0; bk40_r < bk40_er; bk40_r += 1) {
        __global float* const bk40_g = v34 + (long)bk40_r * stride_bk;
        float* const bk40_p = v4 + bk40_r * 32;
        if (bk40_ec == 32) {
          KD_VST(float, 16, __private, bk40_p + 0, KD_VLD(float, 16, __global, bk40_g + 0));
          KD_VST(float, 16, __private, bk40_p + 16, KD_VLD(float, 16, __global, bk40_g + 16));
        } else {
          for (int bk40_c = 0; bk40_c < 32; bk40_c += 1) bk40_p[bk40_c] = bk40_c < bk40_ec ? bk40_g[bk40_c] : 0.0f;
        }
      }
      for (int bk40_c = bk40_er * 32; bk40_c < 1024; bk40_c += 1) v4[bk40_c] = 0.0f;
    }
    for (int mm41_j = 0; mm41_j < 32; mm41_j += 32) {
      for (int mm41_i = 0; mm41_i < 32; mm41_i += 8) {
        float16 mm41_c0_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 0) * 32 + mm41_j + 0);
        float16 mm41_c0_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 0) * 32 + mm41_j + 16);
        float16 mm41_c1_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 1) * 32 + mm41_j + 0);
        float16 mm41_c1_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 1) * 32 + mm41_j + 16);
        float16 mm41_c2_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 2) * 32 + mm41_j + 0);
        float16 mm41_c2_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 2) * 32 + mm41_j + 16);
        float16 mm41_c3_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 3) * 32 + mm41_j + 0);
        float16 mm41_c3_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 3) * 32 + mm41_j + 16);
        float16 mm41_c4_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 4) * 32 + mm41_j + 0);
        float16 mm41_c4_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 4) * 32 + mm41_j + 16);
        float16 mm41_c5_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 5) * 32 + mm41_j + 0);
        float16 mm41_c5_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 5) * 32 + mm41_j + 16);
        float16 mm41_c6_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 6) * 32 + mm41_j + 0);
        float16 mm41_c6_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 6) * 32 + mm41_j + 16);
        float16 mm41_c7_0 = KD_VLD(float, 16, __private, v2 + (mm41_i + 7) * 32 + mm41_j + 0);
        float16 mm41_c7_1 = KD_VLD(float, 16, __private, v2 + (mm41_i + 7) * 32 + mm41_j + 16);
        for (int mm41_k = 0; mm41_k < 32; mm41_k += 1) {
          const float16 mm41_b0 = KD_VLD(float, 16, __private, v4 + mm41_k * 32 + mm41_j + 0);
          const float16 mm41_b1 = KD_VLD(float, 16, __private, v4 + mm41_k * 32 + mm41_j + 16);
          const float16 mm41_a0 = (float16)(v3[(mm41_i + 0) * 32 + mm41_k]);
          mm41_c0_0 = fma(mm41_a0, mm41_b0, mm41_c0_0);
          mm41_c0_1 = fma(mm41_a0, mm41_b1, mm41_c0_1);
          const float16 mm41_a1 = (float16)(v3[(mm41_i + 1) * 32 + mm41_k]);
          mm41_c1_0 = fma(mm41_a1, mm41_b0, mm41_c1_0);
          mm41_c1_1 = fma(mm41_a1, mm41_b1, mm41_c1_1);
          const float16 mm41_a2 = (float16)(v3[(mm41_i + 2) * 32 + mm41_k]);
          mm41_c2_0 = fma(mm41_a2, mm41_b0, mm41_c2_0);
          mm41_c2_1 = fma(mm41_a2, mm41_b1, mm41_c2_1);
          const float16 mm41_a3 = (float16)(v3[(mm41_i + 3) * 32 + mm41_k]);
          mm41_c3_0 = fma(mm41_a3, mm41_b0, mm41_c3_0);
          mm41_c3_1 = fma(mm41_a3, mm41_b1, mm41_c3_1);
          const float16 mm41_a4 = (float16)(v3[(mm41_i + 4) * 32 + mm41_k]);
          mm41_c4_0 = fma(mm41_a4, mm41_b0, mm41_c4_0);
          mm41_c4_1 = fma(mm41_a4, mm41_b1, mm41_c4_1);
          const float16 mm41_a5 = (float16)(v3[(mm41_i + 5) * 32 + mm41_k]);
          mm41_c5_0 = fma(mm41_a5, mm41_b0, mm41_c5_0);
          mm41_c5_1 = fma(mm41_a5, mm41_b1, mm41_c5_1);
          const float16 mm41_a6 = (float16)(v3[(mm41_i + 6) * 32 + mm41_k]);
          mm41_c6_0 = fma(mm41_a6, mm41_b0, mm41_c6_0);
          mm41_c6_1 = fma(mm41_a6, mm41_b1, mm41_c6_1);
          const float16 mm41_a7 = (float16)(v3[(mm41_i + 7) * 32 + mm41_k]);
          mm41_c7_0 = fma(mm41_a7, mm41_b0, mm41_c7_0);
          mm41_c7_1 = fma(mm41_a7, mm41_b1, mm41_c7_1);
        }
        KD_VST(float, 16, __private, v2 + (mm41_i + 0) * 32 + mm41_j + 0, mm41_c0_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 0) * 32 + mm41_j + 16, mm41_c0_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 1) * 32 + mm41_j + 0, mm41_c1_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 1) * 32 + mm41_j + 16, mm41_c1_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 2) * 32 + mm41_j + 0, mm41_c2_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 2) * 32 + mm41_j + 16, mm41_c2_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 3) * 32 + mm41_j + 0, mm41_c3_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 3) * 32 + mm41_j + 16, mm41_c3_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 4) * 32 + mm41_j + 0, mm41_c4_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 4) * 32 + mm41_j + 16, mm41_c4_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 5) * 32 + mm41_j + 0, mm41_c5_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 5) * 32 + mm41_j + 16, mm41_c5_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 6) * 32 + mm41_j + 0, mm41_c6_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 6) * 32 + mm41_j + 16, mm41_c6_1);
        KD_VST(float, 16, __private, v2 + (mm41_i + 7) * 32 + mm41_j + 0, mm41_c7_0);
        KD_VST(float, 16, __private, v2 + (mm41_i + 7) * 32 + mm41_j + 16, mm41_c7_1);
      }
    }
    const int v42 = ((int)((uint)stride_bk * (uint)32));
    const long v43 = ((long)((ulong)v30 + (ulong)32L));
    const long v44 = ((long)(v42));
    const long v45 = ((long)((ulong)v31 + (ulong)v44));
    const long t45_0 = v43;
    const long t45_1 = v45;
    v30 = t45_0;
    v31 = t45_1;
  }
  const int v46 = ((int)((uint)v20 * (uint)stride_cm));
  __global float* const v47 = ((__global float*)c_ptr + v46);
  __global float* const v48 = ((__global float*)v47 + v21);
  const int v49 = ((int)((uint)M - (uint)v20));
  const int v50 = ((int)((uint)N - (uint)v21));
  {
    const int bk51_er = ((v49) <= 0 ? 0 : (v49) >= 32 ? 32 : (int)(v49));
    const int bk51_ec = ((v50) <= 0 ? 0 : (v50) >= 32 ? 32 : (int)(v50));
    for (int bk51_r = 0; bk51_r < bk51_er; bk51_r += 1) {
      __global float* const bk51_g = v48 + (long)bk51_r * stride_cm;
      float* const bk51_p = v2 + bk51_r * 32;
      if (bk51_ec == 32) {
        KD_VST(float, 16, __global, bk51_g + 0, KD_VLD(float, 16, __private, bk51_p + 0));
        KD_VST(float, 16, __global, bk51_g + 16, KD_VLD(float, 16, __private, bk51_p + 16));
      } else {
        for (int bk51_c = 0; bk51_c < bk51_ec; bk51_c += 1) bk51_g[bk51_c] = bk51_p[bk51_c];
      }
    }
  }
}
