#pragma OPENCL FP_CONTRACT OFF
inline int kd_div_int(int a, int b) { return b == 0 ? (int)0 : (b == -1 ? (int)((uint)0 - (uint)a) : (int)(a / b)); }
inline int kd_rem_int(int a, int b) { return (b == 0 || b == -1) ? (int)0 : (int)(a % b); }
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
  __global float* v3[1024];
  __global float* v4[1024];
  float v5[1024];
  float v6[1024];
  const int v7 = ((int)((uint)M + (uint)32));
  const int v8 = ((int)((uint)v7 - (uint)1));
  const int v9 = ((int)(v8 / 32));
  const int v10 = ((int)((uint)N + (uint)32));
  const int v11 = ((int)((uint)v10 - (uint)1));
  const int v12 = ((int)(v11 / 32));
  const int v13 = ((int)((uint)v12 * (uint)4));
  const int v14 = kd_div_int(v1, v13);
  const int v15 = ((int)((uint)v14 * (uint)4));
  const int v16 = ((int)((uint)v9 - (uint)v15));
  const int v17 = min(v16, 4);
  const int v18 = kd_rem_int(v1, v13);
  const int v19 = kd_rem_int(v18, v17);
  const int v20 = ((int)((uint)v15 + (uint)v19));
  const int v21 = kd_div_int(v18, v17);
  const int v22 = ((int)((uint)v20 * (uint)32));
  const int v23 = ((int)((uint)v21 * (uint)32));
  const int v24 = ((int)((uint)K + (uint)32));
  const int v25 = ((int)((uint)v24 - (uint)1));
  const int v26 = ((int)(v25 / 32));
  for (int v27 = 0; v27 < 1024; v27 += 1) {
    v2[v27] = 0.0f;
    const int v28 = ((int)(v27 % 32));
    const int v29 = ((int)(v27 / 32));
    const int v30 = ((int)((uint)v22 + (uint)v29));
    const int v31 = ((int)((uint)v30 * (uint)stride_am));
    __global float* const v32 = ((__global float*)a_ptr + v31);
    __global float* const v33 = ((__global float*)v32 + v28);
    v3[v27] = v33;
    const int v34 = ((int)((uint)v29 * (uint)stride_bk));
    __global float* const v35 = ((__global float*)b_ptr + v34);
    const int v36 = ((int)((uint)v23 + (uint)v28));
    __global float* const v37 = ((__global float*)v35 + v36);
    v4[v27] = v37;
  }
  for (int v38 = 0; v38 < v26; v38 += 1) {
    const int v39 = ((int)((uint)v38 * (uint)32));
    const int v40 = ((int)((uint)K - (uint)v39));
    for (int v41 = 0; v41 < 1024; v41 += 1) {
      __global float* const v42 = v3[v41];
      const int v43 = ((int)(v41 % 32));
      const int v44 = ((int)(v41 / 32));
      const int v45 = ((int)((uint)v22 + (uint)v44));
      const uchar v46 = ((uchar)(v45 < M));
      const uchar v47 = ((uchar)(v43 < v40));
      const uchar v48 = ((uchar)(((uchar)(v46 & v47)) & 1));
      const float v49 = (v48 ? *v42 : 0.0f);
      v5[v41] = v49;
      __global float* const v50 = v4[v41];
      const uchar v51 = ((uchar)(v44 < v40));
      const int v52 = ((int)((uint)v23 + (uint)v43));
      const uchar v53 = ((uchar)(v52 < N));
      const uchar v54 = ((uchar)(((uchar)(v51 & v53)) & 1));
      const float v55 = (v54 ? *v50 : 0.0f);
      v6[v41] = v55;
    }
    for (int mm56_i = 0; mm56_i < 32; mm56_i += 8) {
      for (int mm56_j = 0; mm56_j < 32; mm56_j += 32) {
        float16 mm56_c0_0 = vload16(0, v2 + (mm56_i + 0) * 32 + mm56_j + 0);
        float16 mm56_c0_1 = vload16(0, v2 + (mm56_i + 0) * 32 + mm56_j + 16);
        float16 mm56_c1_0 = vload16(0, v2 + (mm56_i + 1) * 32 + mm56_j + 0);
        float16 mm56_c1_1 = vload16(0, v2 + (mm56_i + 1) * 32 + mm56_j + 16);
        float16 mm56_c2_0 = vload16(0, v2 + (mm56_i + 2) * 32 + mm56_j + 0);
        float16 mm56_c2_1 = vload16(0, v2 + (mm56_i + 2) * 32 + mm56_j + 16);
        float16 mm56_c3_0 = vload16(0, v2 + (mm56_i + 3) * 32 + mm56_j + 0);
        float16 mm56_c3_1 = vload16(0, v2 + (mm56_i + 3) * 32 + mm56_j + 16);
        float16 mm56_c4_0 = vload16(0, v2 + (mm56_i + 4) * 32 + mm56_j + 0);
        float16 mm56_c4_1 = vload16(0, v2 + (mm56_i + 4) * 32 + mm56_j + 16);
        float16 mm56_c5_0 = vload16(0, v2 + (mm56_i + 5) * 32 + mm56_j + 0);
        float16 mm56_c5_1 = vload16(0, v2 + (mm56_i + 5) * 32 + mm56_j + 16);
        float16 mm56_c6_0 = vload16(0, v2 + (mm56_i + 6) * 32 + mm56_j + 0);
        float16 mm56_c6_1 = vload16(0, v2 + (mm56_i + 6) * 32 + mm56_j + 16);
        float16 mm56_c7_0 = vload16(0, v2 + (mm56_i + 7) * 32 + mm56_j + 0);
        float16 mm56_c7_1 = vload16(0, v2 + (mm56_i + 7) * 32 + mm56_j + 16);
        for (int mm56_k = 0; mm56_k < 32; mm56_k += 1) {
          const float16 mm56_b0 = vload16(0, v6 + mm56_k * 32 + mm56_j + 0);
          const float16 mm56_b1 = vload16(0, v6 + mm56_k * 32 + mm56_j + 16);
          const float16 mm56_a0 = (float16)(v5[(mm56_i + 0) * 32 + mm56_k]);
          mm56_c0_0 = fma(mm56_a0, mm56_b0, mm56_c0_0);
          mm56_c0_1 = fma(mm56_a0, mm56_b1, mm56_c0_1);
          const float16 mm56_a1 = (float16)(v5[(mm56_i + 1) * 32 + mm56_k]);
          mm56_c1_0 = fma(mm56_a1, mm56_b0, mm56_c1_0);
          mm56_c1_1 = fma(mm56_a1, mm56_b1, mm56_c1_1);
          const float16 mm56_a2 = (float16)(v5[(mm56_i + 2) * 32 + mm56_k]);
          mm56_c2_0 = fma(mm56_a2, mm56_b0, mm56_c2_0);
          mm56_c2_1 = fma(mm56_a2, mm56_b1, mm56_c2_1);
          const float16 mm56_a3 = (float16)(v5[(mm56_i + 3) * 32 + mm56_k]);
          mm56_c3_0 = fma(mm56_a3, mm56_b0, mm56_c3_0);
          mm56_c3_1 = fma(mm56_a3, mm56_b1, mm56_c3_1);
          const float16 mm56_a4 = (float16)(v5[(mm56_i + 4) * 32 + mm56_k]);
          mm56_c4_0 = fma(mm56_a4, mm56_b0, mm56_c4_0);
          mm56_c4_1 = fma(mm56_a4, mm56_b1, mm56_c4_1);
          const float16 mm56_a5 = (float16)(v5[(mm56_i + 5) * 32 + mm56_k]);
          mm56_c5_0 = fma(mm56_a5, mm56_b0, mm56_c5_0);
          mm56_c5_1 = fma(mm56_a5, mm56_b1, mm56_c5_1);
          const float16 mm56_a6 = (float16)(v5[(mm56_i + 6) * 32 + mm56_k]);
          mm56_c6_0 = fma(mm56_a6, mm56_b0, mm56_c6_0);
          mm56_c6_1 = fma(mm56_a6, mm56_b1, mm56_c6_1);
          const float16 mm56_a7 = (float16)(v5[(mm56_i + 7) * 32 + mm56_k]);
          mm56_c7_0 = fma(mm56_a7, mm56_b0, mm56_c7_0);
          mm56_c7_1 = fma(mm56_a7, mm56_b1, mm56_c7_1);
        }
        vstore16(mm56_c0_0, 0, v2 + (mm56_i + 0) * 32 + mm56_j + 0);
        vstore16(mm56_c0_1, 0, v2 + (mm56_i + 0) * 32 + mm56_j + 16);
        vstore16(mm56_c1_0, 0, v2 + (mm56_i + 1) * 32 + mm56_j + 0);
        vstore16(mm56_c1_1, 0, v2 + (mm56_i + 1) * 32 + mm56_j + 16);
        vstore16(mm56_c2_0, 0, v2 + (mm56_i + 2) * 32 + mm56_j + 0);
        vstore16(mm56_c2_1, 0, v2 + (mm56_i + 2) * 32 + mm56_j + 16);
        vstore16(mm56_c3_0, 0, v2 + (mm56_i + 3) * 32 + mm56_j + 0);
        vstore16(mm56_c3_1, 0, v2 + (mm56_i + 3) * 32 + mm56_j + 16);
        vstore16(mm56_c4_0, 0, v2 + (mm56_i + 4) * 32 + mm56_j + 0);
        vstore16(mm56_c4_1, 0, v2 + (mm56_i + 4) * 32 + mm56_j + 16);
        vstore16(mm56_c5_0, 0, v2 + (mm56_i + 5) * 32 + mm56_j + 0);
        vstore16(mm56_c5_1, 0, v2 + (mm56_i + 5) * 32 + mm56_j + 16);
        vstore16(mm56_c6_0, 0, v2 + (mm56_i + 6) * 32 + mm56_j + 0);
        vstore16(mm56_c6_1, 0, v2 + (mm56_i + 6) * 32 + mm56_j + 16);
        vstore16(mm56_c7_0, 0, v2 + (mm56_i + 7) * 32 + mm56_j + 0);
        vstore16(mm56_c7_1, 0, v2 + (mm56_i + 7) * 32 + mm56_j + 16);
      }
    }
    const int v57 = ((int)((uint)stride_bk * (uint)32));
    for (int v58 = 0; v58 < 1024; v58 += 1) {
      __global float* const v59 = v3[v58];
      __global float* const v60 = ((__global float*)v59 + 32);
      v3[v58] = v60;
      __global float* const v61 = v4[v58];
      __global float* const v62 = ((__global float*)v61 + v57);
      v4[v58] = v62;
    }
  }
  for (int v63 = 0; v63 < 1024; v63 += 1) {
    const int v64 = ((int)(v63 % 32));
    const int v65 = ((int)(v63 / 32));
    const int v66 = ((int)((uint)v22 + (uint)v65));
    const int v67 = ((int)((uint)v66 * (uint)stride_cm));
    __global float* const v68 = ((__global float*)c_ptr + v67);
    const int v69 = ((int)((uint)v23 + (uint)v64));
    __global float* const v70 = ((__global float*)v68 + v69);
    const float v71 = v2[v63];
    const int v72 = ((int)((uint)v22 + (uint)v65));
    const uchar v73 = ((uchar)(v72 < M));
    const int v74 = ((int)((uint)v23 + (uint)v64));
    const uchar v75 = ((uchar)(v74 < N));
    const uchar v76 = ((uchar)(((uchar)(v73 & v75)) & 1));
    if (v76) *v70 = v71;
  }
}
