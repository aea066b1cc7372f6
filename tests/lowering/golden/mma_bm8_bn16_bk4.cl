#pragma OPENCL FP_CONTRACT OFF
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
  __global float* v4[32];
  __global float* v5[64];
  float v6[32];
  float v7[64];
  const int v8 = ((int)((uint)v1 * (uint)8));
  const int v9 = ((int)((uint)v2 * (uint)16));
  const int v10 = ((int)((uint)K + (uint)4));
  const int v11 = ((int)((uint)v10 - (uint)1));
  const int v12 = ((int)(v11 / 4));
  for (int v13 = 0; v13 < 128; v13 += 1) {
    v3[v13] = 0.0f;
  }
  for (int v14 = 0; v14 < 32; v14 += 1) {
    const int v15 = ((int)(v14 % 4));
    const int v16 = ((int)(v14 / 4));
    const int v17 = ((int)((uint)v8 + (uint)v16));
    const int v18 = ((int)((uint)v17 * (uint)K));
    __global float* const v19 = ((__global float*)a_ptr + v18);
    __global float* const v20 = ((__global float*)v19 + v15);
    v4[v14] = v20;
  }
  for (int v21 = 0; v21 < 64; v21 += 1) {
    const int v22 = ((int)(v21 % 16));
    const int v23 = ((int)(v21 / 16));
    const int v24 = ((int)((uint)v23 * (uint)N));
    __global float* const v25 = ((__global float*)b_ptr + v24);
    const int v26 = ((int)((uint)v9 + (uint)v22));
    __global float* const v27 = ((__global float*)v25 + v26);
    v5[v21] = v27;
  }
  for (int v28 = 0; v28 < v12; v28 += 1) {
    const int v29 = ((int)((uint)v28 * (uint)4));
    const int v30 = ((int)((uint)K - (uint)v29));
    for (int v31 = 0; v31 < 32; v31 += 1) {
      __global float* const v32 = v4[v31];
      const int v33 = ((int)(v31 % 4));
      const int v34 = ((int)(v31 / 4));
      const int v35 = ((int)((uint)v8 + (uint)v34));
      const uchar v36 = ((uchar)(v35 < M));
      const uchar v37 = ((uchar)(v33 < v30));
      const uchar v38 = ((uchar)(((uchar)(v36 & v37)) & 1));
      const float v39 = (v38 ? *v32 : 0.0f);
      v6[v31] = v39;
    }
    for (int v40 = 0; v40 < 64; v40 += 1) {
      __global float* const v41 = v5[v40];
      const int v42 = ((int)(v40 % 16));
      const int v43 = ((int)(v40 / 16));
      const uchar v44 = ((uchar)(v43 < v30));
      const int v45 = ((int)((uint)v9 + (uint)v42));
      const uchar v46 = ((uchar)(v45 < N));
      const uchar v47 = ((uchar)(((uchar)(v44 & v46)) & 1));
      const float v48 = (v47 ? *v41 : 0.0f);
      v7[v40] = v48;
    }
    for (int mm49_i = 0; mm49_i < 8; mm49_i += 4) {
      for (int mm49_j = 0; mm49_j < 16; mm49_j += 16) {
        float16 mm49_c0_0 = vload16(0, v3 + (mm49_i + 0) * 16 + mm49_j + 0);
        float16 mm49_c1_0 = vload16(0, v3 + (mm49_i + 1) * 16 + mm49_j + 0);
        float16 mm49_c2_0 = vload16(0, v3 + (mm49_i + 2) * 16 + mm49_j + 0);
        float16 mm49_c3_0 = vload16(0, v3 + (mm49_i + 3) * 16 + mm49_j + 0);
        for (int mm49_k = 0; mm49_k < 4; mm49_k += 1) {
          const float16 mm49_b0 = vload16(0, v7 + mm49_k * 16 + mm49_j + 0);
          const float16 mm49_a0 = (float16)(v6[(mm49_i + 0) * 4 + mm49_k]);
          mm49_c0_0 = fma(mm49_a0, mm49_b0, mm49_c0_0);
          const float16 mm49_a1 = (float16)(v6[(mm49_i + 1) * 4 + mm49_k]);
          mm49_c1_0 = fma(mm49_a1, mm49_b0, mm49_c1_0);
          const float16 mm49_a2 = (float16)(v6[(mm49_i + 2) * 4 + mm49_k]);
          mm49_c2_0 = fma(mm49_a2, mm49_b0, mm49_c2_0);
          const float16 mm49_a3 = (float16)(v6[(mm49_i + 3) * 4 + mm49_k]);
          mm49_c3_0 = fma(mm49_a3, mm49_b0, mm49_c3_0);
        }
        vstore16(mm49_c0_0, 0, v3 + (mm49_i + 0) * 16 + mm49_j + 0);
        vstore16(mm49_c1_0, 0, v3 + (mm49_i + 1) * 16 + mm49_j + 0);
        vstore16(mm49_c2_0, 0, v3 + (mm49_i + 2) * 16 + mm49_j + 0);
        vstore16(mm49_c3_0, 0, v3 + (mm49_i + 3) * 16 + mm49_j + 0);
      }
    }
    const int v50 = ((int)((uint)N * (uint)4));
    for (int v51 = 0; v51 < 32; v51 += 1) {
      __global float* const v52 = v4[v51];
      __global float* const v53 = ((__global float*)v52 + 4);
      v4[v51] = v53;
    }
    for (int v54 = 0; v54 < 64; v54 += 1) {
      __global float* const v55 = v5[v54];
      __global float* const v56 = ((__global float*)v55 + v50);
      v5[v54] = v56;
    }
  }
  for (int v57 = 0; v57 < 128; v57 += 1) {
    const int v58 = ((int)(v57 % 16));
    const int v59 = ((int)(v57 / 16));
    const int v60 = ((int)((uint)v8 + (uint)v59));
    const int v61 = ((int)((uint)v60 * (uint)N));
    __global float* const v62 = ((__global float*)c_ptr + v61);
    const int v63 = ((int)((uint)v9 + (uint)v58));
    __global float* const v64 = ((__global float*)v62 + v63);
    const float v65 = v3[v57];
    const int v66 = ((int)((uint)v8 + (uint)v59));
    const uchar v67 = ((uchar)(v66 < M));
    const int v68 = ((int)((uint)v9 + (uint)v58));
    const uchar v69 = ((uchar)(v68 < N));
    const uchar v70 = ((uchar)(((uchar)(v67 & v69)) & 1));
    if (v70) *v64 = v65;
  }
}

